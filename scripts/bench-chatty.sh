#!/usr/bin/env bash
# Idle CPU of agentsh while a background job of an ended command keeps
# writing to that command's output (issue 11 §4; goal ≤ 5% of a core).
#
#   scripts/bench-chatty.sh [BINARY] [SECONDS]
#
# Starts `BINARY --mode rpc` (default bin/agentsh, built by `make build`),
# runs `yes > /dev/null & yes & echo started` through the RPC `bash`
# command, waits a second, then prints the CPU agentsh itself used over
# SECONDS (default 10) as a percentage of one core, from /proc/<pid>/stat.
# The RPC session ends by closing stdin, which must leave no `yes` behind.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=${1:-bin/agentsh}
SECS=${2:-10}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentsh-chatty.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
mkfifo "$TMP/in"
XDG_DATA_HOME=$TMP/data XDG_CONFIG_HOME=$TMP/config "$BIN" --mode rpc <"$TMP/in" >"$TMP/out" 2>"$TMP/err" &
pid=$!
exec 3>"$TMP/in"
printf '%s\n' '{"id":"1","type":"bash","command":"yes > /dev/null & yes & echo started"}' >&3
for _ in $(seq 100); do grep -q '"started' "$TMP/out" 2>/dev/null && break; sleep 0.1; done
sleep 1
ticks() { awk '{print $14 + $15}' "/proc/$pid/stat"; }
t0=$(ticks)
sleep "$SECS"
t1=$(ticks)
hz=$(getconf CLK_TCK)
awk -v a="$t0" -v b="$t1" -v s="$SECS" -v hz="$hz" 'BEGIN { printf "agentsh CPU while a background job writes: %.1f%% of a core over %ds\n", (b - a) / hz / s * 100, s }'
exec 3>&-
wait "$pid" || true

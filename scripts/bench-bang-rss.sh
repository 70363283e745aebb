#!/usr/bin/env bash
# agentsh's RSS while a `!` command floods the TUI (issue 13, docs/BENCHMARKS.md §C).
#
#   scripts/bench-bang-rss.sh [BINARY] [COMMAND] [SECONDS]
#
# Starts BINARY (default bin/agentsh, built by `make build`) in a private tmux
# server at 120×40 with a private HOME and XDG data folder, types !COMMAND
# (default `yes`), samples VmRSS every 250 ms for SECONDS (default 10), then
# presses esc and prints the largest sample, VmHWM and the artifact's size.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
BIN=$(realpath "${1:-bin/agentsh}")
CMD=${2:-yes}
SECS=${3:-10}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/agentsh-bangrss.XXXXXX")
SOCK="agentsh-bangrss-$$"
T() { tmux -L "$SOCK" -f /dev/null "$@"; }
trap 'T kill-server 2>/dev/null || true; rm -rf "$TMP"' EXIT
mkdir -p "$TMP/home" "$TMP/work"
T new-session -d -x 120 -y 40 -c "$TMP/work" "env HOME=$TMP/home XDG_DATA_HOME=$TMP/data XDG_CONFIG_HOME=$TMP/config $BIN"
pid=""
for _ in $(seq 1 50); do
	pid=$(T list-panes -F '#{pane_pid}')
	[[ -n $pid ]] && T capture-pane -p | grep -q "Message the agent" && break
	sleep 0.1
done
T send-keys -l "!$CMD"
T send-keys Enter
max=0
for _ in $(seq 1 $((SECS * 4))); do
	sleep 0.25
	rss=$(awk '/^VmRSS/{print $2}' "/proc/$pid/status")
	((rss > max)) && max=$rss
done
hwm=$(awk '/^VmHWM/{print $2}' "/proc/$pid/status")
T send-keys Escape
sleep 1
awk -v c="$CMD" -v s="$SECS" -v m="$max" -v h="$hwm" -v a="$(du -sh "$TMP/data" | cut -f1)" \
	'BEGIN { printf "!%s for %ss: RSS max %.1f MB, VmHWM %.1f MB, artifact %s\n", c, s, m / 1000, h / 1000, a }'

#!/usr/bin/env bash
# Runs a command beside N busy loops (a load average of about N), the way the
# suite is checked to pass on a busy machine: scripts/under-load.sh 10 make test
set -euo pipefail
n=${1:?usage: under-load.sh N command...}
shift
pids=()
stop() { kill "${pids[@]}" 2>/dev/null || true; wait "${pids[@]}" 2>/dev/null || true; }
trap stop EXIT
for ((i = 0; i < n; i++)); do
	nice -n 0 bash -c 'while :; do :; done' &
	pids+=($!)
done
"$@"

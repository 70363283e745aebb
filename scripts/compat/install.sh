#!/bin/sh
# Prints the folder holding omp 18.2.3 and bun under node_modules, after
# installing them there with npm when missing. Exits 3 with a message on
# stderr when they are missing and npm is not available.
set -eu
dir=${AGENTSH_OMP_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/agentsh-compat/omp-18.2.3}
if [ -x "$dir/node_modules/.bin/bun" ] && [ -f "$dir/node_modules/@oh-my-pi/pi-coding-agent/src/modes/rpc/rpc-client.ts" ]; then
	echo "$dir"
	exit 0
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "compat: npm is not available and $dir has no omp install: skipped" >&2
	exit 3
fi
mkdir -p "$dir"
echo "compat: installing @oh-my-pi/pi-coding-agent@18.2.3 and bun into $dir" >&2
(cd "$dir" && npm install --no-audit --no-fund @oh-my-pi/pi-coding-agent@18.2.3 bun >&2)
echo "$dir"

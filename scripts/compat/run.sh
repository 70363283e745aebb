#!/bin/sh
# make compat: omp's own RpcClient against `agentsh --mode rpc` with the fake
# model server; prints one PASS/FAIL line per command. Installs omp and bun
# into a cache folder with npm when missing (install.sh); skips, exit 0,
# when they are missing and npm is not available.
set -eu
cd "$(dirname "$0")/../.."
status=0
dir=$(./scripts/compat/install.sh) || status=$?
if [ "$status" = 3 ]; then
	exit 0
elif [ "$status" != 0 ]; then
	exit "$status"
fi
tmp=$(mktemp -d)
fake=
cleanup() {
	if [ -n "$fake" ]; then kill "$fake" 2>/dev/null || true; wait "$fake" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM
go build -o "$tmp/agentsh" ./cmd/agentsh
go build -o "$tmp/fakeserve" ./internal/compat/cmd/fakeserve
mkdir -p "$tmp/home" "$tmp/data" "$tmp/config/agentsh" "$tmp/work"
# The session the client builds is small: keep only its newest turn, so
# compact has older turns to summarize.
echo '{"compaction": {"keepRecentTokens": 1}}' >"$tmp/config/agentsh/settings.json"
"$tmp/fakeserve" >"$tmp/url" &
fake=$!
i=0
while [ ! -s "$tmp/url" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
url=$(head -n 1 "$tmp/url")
[ -n "$url" ] || { echo "compat: the fake model server did not start" >&2; exit 1; }
env -u AGENTSH_MODEL -u ANTHROPIC_API_KEY -u ANTHROPIC_BASE_URL \
	HOME="$tmp/home" XDG_DATA_HOME="$tmp/data" XDG_CONFIG_HOME="$tmp/config" \
	OPENAI_BASE_URL="$url" OPENAI_API_KEY=test \
	OMP_DIR="$dir" AGENTSH_BIN="$tmp/agentsh" COMPAT_WORK="$tmp/work" COMPAT_MODEL=openai/fake-model \
	"$dir/node_modules/.bin/bun" scripts/compat/rpc-client.ts

#!/usr/bin/env bash
# Runs a command (the test suite) with a HOME of its own, so no test depends on
# the developer's ~/.bashrc, ~/.profile, git config or agentsh settings: the
# persistent shell's snapshot, git and the settings loader see a fresh home
# with plain rc files. Go's caches stay where they are (resolved before HOME
# changes), so nothing is downloaded or rebuilt again, and so do Go's settings.
set -euo pipefail
GOCACHE=$(go env GOCACHE)
GOMODCACHE=$(go env GOMODCACHE)
GOPATH=$(go env GOPATH)
GOENV=$(go env GOENV) # the user's go settings (GOFLAGS, GOPROXY, GOTOOLCHAIN)
export GOCACHE GOMODCACHE GOPATH GOENV
home=$(mktemp -d "${TMPDIR:-/tmp}/agentsh-test-home.XXXXXX")
cleanup() {
	# Tests may leave read-only folders (a sandbox's protected paths).
	chmod -R u+w "$home" 2>/dev/null || true
	rm -rf "$home"
}
trap cleanup EXIT
printf '# agentsh test home: an interactive bash with nothing of the host\n' >"$home/.bashrc"
printf '[ -f ~/.bashrc ] && . ~/.bashrc\n' >"$home/.bash_profile"
export HOME=$home
unset XDG_CONFIG_HOME XDG_DATA_HOME XDG_STATE_HOME XDG_CACHE_HOME
unset BASH_ENV ENV PROMPT_COMMAND
"$@"

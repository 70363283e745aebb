#!/usr/bin/env bash
# What the tests need beyond Go, bash, tmux and vim: podman and runc (targets
# in a container) and sshd (targets over ssh). Installed with apt-get when
# missing and this runs as root; otherwise the tests that need them skip,
# naming what is missing. Never fails the run.
set -u
missing=()
command -v podman >/dev/null || missing+=(podman)
command -v runc >/dev/null || missing+=(runc)
[ -x /usr/sbin/sshd ] || missing+=(openssh-server)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
	echo "test-deps: ${missing[*]} missing (not root or no apt-get): their tests skip" >&2
	exit 0
fi
export DEBIAN_FRONTEND=noninteractive
if ! apt-get install -y --no-install-recommends "${missing[@]}" >/tmp/agentsh-test-deps.log 2>&1; then
	apt-get update >>/tmp/agentsh-test-deps.log 2>&1
	apt-get install -y --no-install-recommends "${missing[@]}" >>/tmp/agentsh-test-deps.log 2>&1 ||
		echo "test-deps: could not install ${missing[*]} (see /tmp/agentsh-test-deps.log): their tests skip" >&2
fi
exit 0

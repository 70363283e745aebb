#!/usr/bin/env bash
# Runs every fuzz target of the module for a while each: scripts/fuzz-all.sh [DURATION]
# The seed corpora under testdata/fuzz run as plain tests in `make test`.
set -euo pipefail
cd "$(dirname "$0")/.."
dur=${1:-30s}
for pkg in $(go list ./...); do
	dir=$(go list -f '{{.Dir}}' "$pkg")
	for fn in $(grep -ho '^func Fuzz[A-Za-z0-9_]*' "$dir"/*_test.go 2>/dev/null | sed 's/^func //' | sort -u); do
		echo "== $pkg $fn ($dur)"
		go test -run '^$' -fuzz "^${fn}\$" -fuzztime "$dur" "$pkg"
	done
done

#!/bin/sh
# Records omp's golden transcripts into internal/compat/testdata (see
# TestRecordOmp). DIR (default: the `make compat` cache) must hold
# node_modules with bun and @oh-my-pi/pi-coding-agent@18.2.3; install.sh
# puts them there.
set -eu
cd "$(dirname "$0")/../.."
dir=${AGENTSH_OMP_DIR:-$(./scripts/compat/install.sh)}
AGENTSH_RECORD_OMP=1 AGENTSH_OMP_DIR="$dir" go test -count=1 -run '^TestRecordOmp$' -v ./internal/compat

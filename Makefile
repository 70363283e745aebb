GO ?= go
STATICCHECK ?= honnef.co/go/tools/cmd/staticcheck@v0.8.2

.PHONY: build test bench lint fuzz compat

build:
	$(GO) build -o bin/agentsh ./cmd/agentsh

# Every test, with the race detector (packages with goroutines need it), in a
# HOME of their own (scripts/hermetic.sh): the host's rc files and settings
# never change a result. The engine's suite runs twice: with /dev/null as stdin, and as the modes
# run it (a terminal as stdin and a job manager, AGENTSH_TEST_TTY=1).
# scripts/test-deps.sh first installs what the target tests need (podman,
# runc, sshd) when it can.
test:
	./scripts/test-deps.sh
	$(GO) vet ./...
	./scripts/hermetic.sh $(GO) test -race -count=1 -timeout 9m ./...
	AGENTSH_TEST_TTY=1 ./scripts/hermetic.sh $(GO) test -race -count=1 -timeout 5m ./internal/bash/

# Micro benchmarks plus whole-process runs (see docs/BENCHMARKS.md).
bench: build
	$(GO) test -run '^$$' -bench . -benchmem -count=1 -timeout 30m ./...
	./scripts/bench-process.sh
	./scripts/bench-bang-rss.sh bin/agentsh yes 10

lint:
	$(GO) vet ./...
	$(GO) run $(STATICCHECK) ./...

# Short fuzzing session of every fuzz target (the seed corpora run in `make test`).
fuzz:
	./scripts/fuzz-all.sh 30s

# omp's own RpcClient against `agentsh --mode rpc` and the fake model, one
# PASS/FAIL line per RPC command (installs omp 18.2.3 and bun with npm into
# a cache folder when missing; skips without npm). CI runs the golden tests
# of internal/compat instead.
compat:
	./scripts/compat/run.sh

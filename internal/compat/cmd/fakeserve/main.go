// Command fakeserve runs the compat model script on the fake model server
// until it gets SIGINT or SIGTERM. It prints the server's base URL (with
// /v1) as its first line, for scripts that drive a client against it.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"testing"

	"agentsh/internal/compat"
	"agentsh/internal/fakemodel"
)

// processTB lets fakemodel.New run outside a test: its cleanups run at exit.
// Only the methods New calls are given; the embedded nil interface panics
// on any other, which would be a bug here.
type processTB struct {
	testing.TB
	cleanups []func()
}

func (p *processTB) Helper()          {}
func (p *processTB) Cleanup(f func()) { p.cleanups = append(p.cleanups, f) }

func main() {
	tb := &processTB{}
	// The script reads the server through an atomic: its handler runs on
	// another goroutine than the one that gets the server from New.
	var ref atomic.Pointer[fakemodel.Server]
	srv := fakemodel.New(tb, compat.ModelScript(ref.Load))
	ref.Store(srv)
	// The model the compat client uses, listed as one that thinks, so its
	// thinking level can be set and read back.
	srv.SetModels(fakemodel.Model{ID: "fake-model", Name: "Fake Model", ContextWindow: 128_000, MaxTokens: 4_096, Reasoning: true})
	fmt.Println(srv.OpenAIBaseURL())
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	<-sig
	for i := len(tb.cleanups) - 1; i >= 0; i-- {
		tb.cleanups[i]()
	}
}

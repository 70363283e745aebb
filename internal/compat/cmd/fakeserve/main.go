// Command fakeserve runs the compat model script on the fake model server
// until stdin closes or it is signalled. It prints the server's base URL
// (with /v1) as its first line, for scripts that drive a client against it.
package main

import (
	"fmt"
	"io"
	"os"
	"os/signal"
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
	var srv *fakemodel.Server
	srv = fakemodel.New(tb, compat.ModelScript(func() *fakemodel.Server { return srv }))
	fmt.Println(srv.OpenAIBaseURL())
	done := make(chan struct{})
	go func() {
		io.Copy(io.Discard, os.Stdin)
		close(done)
	}()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	select {
	case <-done:
	case <-sig:
	}
	for i := len(tb.cleanups) - 1; i >= 0; i-- {
		tb.cleanups[i]()
	}
}

package bash

import (
	"strings"
	"sync"
)

// CloseSession ends the idle shells of sessionKey (a session's `!`
// commands' shells) with every process they started, as Close does for all
// of them: a UI that leaves a session ends its shells then, not at exit. A
// later run with the key starts a new shell. A shell that is running a
// command at that moment stays with its run, and a command that became a
// job keeps its shell (the job goes on). The tool path's shells (key "")
// are shared by every session and are never closed here.
func (e *Executor) CloseSession(sessionKey string) {
	if sessionKey == "" {
		return
	}
	// cacheKey starts with the session key and a newline.
	prefix := sessionKey + "\n"
	var gone []*shellSession
	e.mu.Lock()
	for key, list := range e.idle {
		if strings.HasPrefix(key, prefix) {
			gone = append(gone, list...)
			delete(e.idle, key)
		}
	}
	for _, s := range gone {
		delete(e.all, s)
	}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range gone {
		wg.Go(s.close)
	}
	wg.Wait()
}

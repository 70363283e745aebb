package main

import (
	"fmt"
	"io"
	"sync"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/jobs"
	"agentsh/internal/session"
)

// tuiSessions owns the sessions of one TUI run: the one it started on,
// those /new made and those /resume opened, all on the same executor,
// settings and job manager. A session the TUI leaves is ended at once (its
// `!` shells with what they left running, its file); the others at exit.
type tuiSessions struct {
	o     printOptions
	cwd   string
	live  *config.LiveSettings
	ex    *bash.Executor
	shell bash.ShellConfig
	jm    *jobs.Manager
	// models and retry serve every session (models.go).
	models *agent.Models
	retry  *agent.Retry
	// atExit closes the first session's file, or removes --no-session's
	// artifact folder: kept until exit, since the jobs that session
	// started may still write their full output there.
	atExit func()

	mu      sync.Mutex
	removes []func()                               // --no-session: the artifact folders /new made, removed at exit
	current *agent.AgentSession                    // the session on screen, as the TUI last said
	files   map[*agent.AgentSession]*session.Store // the open sessions' files
	ending  sync.WaitGroup                         // the endings of left sessions
}

// newTUISessions starts with first, the session the TUI opens on;
// closeFirst closes its file (or removes --no-session's folder).
func newTUISessions(o printOptions, cwd string, live *config.LiveSettings, ex *bash.Executor, shell bash.ShellConfig,
	jm *jobs.Manager, first *agent.AgentSession, closeFirst func()) *tuiSessions {
	t := &tuiSessions{o: o, cwd: cwd, live: live, ex: ex, shell: shell, jm: jm, atExit: closeFirst, current: first,
		files: map[*agent.AgentSession]*session.Store{}}
	if st := first.Store(); st != nil {
		t.files[first] = st
	}
	return t
}

// adopt makes the session on store (nil: not saved) that the TUI is about
// to switch to.
func (t *tuiSessions) adopt(store *session.Store) (*agent.AgentSession, error) {
	agent, err := agent.New(t.cwd, store, t.ex, t.shell)
	if err != nil {
		if store != nil {
			_ = store.Close()
		}
		return nil, err
	}
	agent.FollowSettings(t.live)
	agent.SetSandbox(t.o.sb)
	agent.SetJobs(t.jm)
	// A resumed session continues with its model; the TUI has no stderr
	// for a model that cannot come back, which stays as it was.
	_ = attachModelsRestoring(agent, t.models, t.retry, true)
	if store != nil {
		t.mu.Lock()
		t.files[agent] = store
		t.mu.Unlock()
	}
	return agent, nil
}

// newSession is /new: a fresh session (a new file, none with --no-session).
func (t *tuiSessions) newSession() (*agent.AgentSession, error) {
	var store *session.Store
	if !t.o.noSession {
		var err error
		if store, err = session.Create(t.cwd); err != nil {
			return nil, fmt.Errorf("new session: %w", err)
		}
	}
	agent, err := t.adopt(store)
	if err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	if store == nil {
		// As the first session: full outputs in a temporary folder, kept
		// until exit (its jobs may still write there). A failure leaves
		// the session without artifacts, as a full disk would; the TUI
		// has no stderr to say it on.
		remove := tempArtifacts(agent, io.Discard)
		t.mu.Lock()
		t.removes = append(t.removes, remove)
		t.mu.Unlock()
	}
	return agent, nil
}

// list is /resume's list: the directory's saved sessions, newest first.
func (t *tuiSessions) list() ([]session.Info, error) { return session.List(t.cwd) }

// open is /resume's choice: the saved session, opened for appending, with a
// warning when corrupt lines were skipped.
func (t *tuiSessions) open(info session.Info) (*agent.AgentSession, string, error) {
	store, loadErrs, err := session.Open(info.Path)
	if err != nil {
		return nil, "", err
	}
	agent, err := t.adopt(store)
	if err != nil {
		return nil, "", err
	}
	warning := ""
	if len(loadErrs) > 0 {
		warning = fmt.Sprintf("Skipped %d corrupt line(s) of the session: %v", len(loadErrs), loadErrs[0])
	}
	return agent, warning, nil
}

// left is told by the TUI that it is done with left and goes on with
// current. left's shells and file are ended in the background (the TUI's
// Update must not wait), before closeAll returns.
func (t *tuiSessions) left(left, current *agent.AgentSession) {
	t.mu.Lock()
	t.current = current
	file := t.files[left]
	delete(t.files, left)
	t.mu.Unlock()
	t.ending.Go(func() {
		t.ex.CloseSession(left.ID())
		if file != nil {
			_ = file.Close()
		}
	})
}

// final is the session the TUI ended on.
func (t *tuiSessions) final() *agent.AgentSession {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.current
}

// closeAll closes every session still open, after the endings under way.
func (t *tuiSessions) closeAll() {
	t.ending.Wait()
	t.mu.Lock()
	for s, f := range t.files {
		_ = f.Close()
		delete(t.files, s)
	}
	removes := t.removes
	t.removes = nil
	t.mu.Unlock()
	for _, r := range removes {
		r()
	}
	t.atExit()
}

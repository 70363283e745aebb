package agent

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"

	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/guard"
	"agentsh/internal/jobs"
	"agentsh/internal/session"
)

// SessionsConfig is what every conversation of one agentsh process shares.
type SessionsConfig struct {
	Cwd      string
	Live     *config.LiveSettings // settings.json edits apply from the next command
	Executor *bash.Executor
	Shell    bash.ShellConfig
	Jobs     *jobs.Manager
	Sandbox  config.SandboxSettings
	Models   *Models
	Retry    *Retry
	// NoSave is --no-session: nothing is written; each conversation keeps
	// its full outputs in a temporary folder removed at Close.
	NoSave bool
	// RestoreModel says whether a saved conversation opened with Open
	// continues with the model and level it recorded last (else the
	// process's current ones stay). The first one decides with its own
	// argument (First).
	RestoreModel bool
	// Warn receives what goes wrong on the side (a model that cannot come
	// back, a folder for full outputs that cannot be made); nil drops it.
	Warn func(string)
}

// Sessions owns the conversations of one agentsh process: the one it
// starts on, those it makes (new_session, /new) and those it opens
// (switch_session, /resume), all on the same executor, settings, job
// manager and models. It is the one way a conversation is assembled, for
// the TUI, RPC and print mode alike. A conversation that is left is ended
// at once in the background (its `!` shells with what they left running,
// its file); the others at Close.
type Sessions struct {
	c SessionsConfig

	mu      sync.Mutex
	current *AgentSession
	files   map[*AgentSession]*session.Store // the open conversations' files
	removes []func()                         // NoSave: the temporary folders, removed at Close
	ending  sync.WaitGroup                   // the endings of left conversations
	closed  bool
}

// NewSessions is the owner of the process's conversations; none is open
// until First.
func NewSessions(c SessionsConfig) *Sessions {
	return &Sessions{c: c, files: map[*AgentSession]*session.Store{}}
}

func (s *Sessions) warn(msg string) {
	if s.c.Warn != nil {
		s.c.Warn(msg)
	}
}

// First makes the conversation the process starts on from store (nil: not
// saved); restore says whether a resumed one continues with its own model
// (false when --model or --thinking chose). The error of a model that
// cannot come back is returned beside the conversation, for the caller to
// say where it says things.
func (s *Sessions) First(store *session.Store, restore bool) (a *AgentSession, modelErr, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.adoptLocked(store, restore)
}

// adoptLocked makes the conversation on store the current one; s.mu is held.
func (s *Sessions) adoptLocked(store *session.Store, restore bool) (a *AgentSession, modelErr, err error) {
	if s.closed {
		if store != nil {
			_ = store.Close()
		}
		return nil, nil, errors.New("sessions closed")
	}
	a, err = New(s.c.Cwd, store, s.c.Executor, s.c.Shell)
	if err != nil {
		if store != nil {
			_ = store.Close()
		}
		return nil, nil, err
	}
	if store == nil {
		s.removes = append(s.removes, s.tempArtifacts(a))
	}
	if s.c.Live != nil {
		a.FollowSettings(s.c.Live)
	}
	a.SetSandbox(s.c.Sandbox)
	if s.c.Jobs != nil {
		a.SetJobs(s.c.Jobs)
	}
	if s.c.Models != nil {
		modelErr = a.AttachModels(s.c.Models, s.c.Retry, restore)
	}
	if store != nil {
		s.files[a] = store
	}
	s.current = a
	return a, modelErr, nil
}

// New makes a fresh conversation (a new file; none with NoSave) and makes
// it the current one.
func (s *Sessions) New() (*AgentSession, error) {
	var store *session.Store
	if !s.c.NoSave {
		var err error
		if store, err = session.Create(s.c.Cwd); err != nil {
			return nil, fmt.Errorf("new session: %w", err)
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a, modelErr, err := s.adoptLocked(store, s.c.RestoreModel)
	if err != nil {
		return nil, fmt.Errorf("new session: %w", err)
	}
	if modelErr != nil {
		s.warn(modelErr.Error())
	}
	return a, nil
}

// Open opens the saved conversation at path (relative to the working
// directory) for appending and makes it the current one; the current one
// when it is that file already (one store per file). skipped are the
// corrupt lines left out, for the caller to tell.
func (s *Sessions) Open(path string) (a *AgentSession, skipped []session.LoadError, err error) {
	if !filepath.IsAbs(path) {
		path = filepath.Join(s.c.Cwd, path)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.current != nil {
		if st := s.current.Store(); st != nil && st.Path() == path {
			return s.current, nil, nil
		}
	}
	store, skipped, err := session.Open(path)
	if err != nil {
		return nil, nil, err
	}
	a, modelErr, err := s.adoptLocked(store, s.c.RestoreModel)
	if err != nil {
		return nil, nil, err
	}
	if modelErr != nil {
		s.warn(modelErr.Error())
	}
	return a, skipped, nil
}

// OpenTelling is Open for a caller with nowhere to show a warning (RPC):
// the corrupt lines skipped are told to Warn.
func (s *Sessions) OpenTelling(path string) (*AgentSession, error) {
	a, skipped, err := s.Open(path)
	if len(skipped) > 0 {
		s.warn(fmt.Sprintf("skipped %d corrupt line(s) of the session: %v", len(skipped), skipped[0]))
	}
	return a, err
}

// List is the working directory's saved conversations, newest first.
func (s *Sessions) List() ([]session.Info, error) { return session.List(s.c.Cwd) }

// Current is the conversation on screen (TUI) or served (RPC).
func (s *Sessions) Current() *AgentSession {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Leave ends left, which its user is done with, and goes on with current:
// left's shells and file are ended in the background (a UI's Update must
// not wait), before Close returns.
func (s *Sessions) Leave(left, current *AgentSession) {
	s.mu.Lock()
	s.current = current
	if left == nil || left == current {
		s.mu.Unlock()
		return
	}
	file := s.files[left]
	delete(s.files, left)
	s.mu.Unlock()
	s.ending.Go(func() {
		s.c.Executor.CloseSession(left.ID())
		if file != nil {
			_ = file.Close()
		}
	})
}

// Close closes every conversation still open, after the endings under way,
// and removes NoSave's temporary folders. Jobs are the caller's: they may
// still write to those folders until the job manager is closed.
func (s *Sessions) Close() {
	s.ending.Wait()
	s.mu.Lock()
	s.closed = true
	for a, f := range s.files {
		_ = f.Close()
		delete(s.files, a)
	}
	removes := s.removes
	s.removes = nil
	s.mu.Unlock()
	for _, r := range removes {
		r()
	}
}

// tempArtifactsPrefix names the folders that keep the artifacts of a
// conversation that is not saved while agentsh runs.
const tempArtifactsPrefix = "agentsh-artifacts-"

// removeStaleArtifacts removes, once per process, the folders a killed
// agentsh left.
var removeStaleArtifacts = sync.OnceFunc(func() { guard.RemoveStale(os.TempDir(), tempArtifactsPrefix) })

// tempArtifacts gives a conversation without a store an artifact folder in
// the temporary directory, so truncated output keeps its artifact:// link,
// ctrl+g and `read artifact://N` for the life of the process; the returned
// func removes it. The folder is named after this process, so one left by
// a killed agentsh is removed by the next start. When it cannot be made,
// the conversation goes on without artifacts, as it would on a full disk.
func (s *Sessions) tempArtifacts(a *AgentSession) (remove func()) {
	removeStaleArtifacts()
	dir, err := guard.MkdirOwned(os.TempDir(), tempArtifactsPrefix)
	if err != nil {
		s.warn(fmt.Sprintf("no folder for full outputs: %v", err))
		return func() {}
	}
	a.SetArtifactsDir(dir)
	return func() { _ = os.RemoveAll(dir) }
}

// AttachModels makes a's loop read models and retry at every call. A
// resumed conversation continues with the model and level it recorded
// last when restore says so. A new one records the model it starts with,
// as the reference does (its first entries are the model and level; they
// are written with the first message), then every change.
func (a *AgentSession) AttachModels(models *Models, retry *Retry, restore bool) error {
	a.SetModels(models)
	a.SetRetry(retry)
	if len(a.Messages()) == 0 {
		return a.RecordModelsOf(models)
	}
	if restore {
		return a.RestoreModel(models)
	}
	return nil
}

package agent

import (
	"errors"
	"strings"
)

// ErrEmptyName refuses a blank session name (the reference's words).
var ErrEmptyName = errors.New("Session name cannot be empty") //lint:ignore ST1005 user-facing text from the reference

// Name is the session's name ("" = never named): the store's, as loaded
// from its file or last set, or the in-memory session's.
func (a *AgentSession) Name() string {
	if a.store != nil {
		return a.store.Name()
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.name
}

// SetName names the session (trimmed), persisted as a title_change entry
// of its file, so a resumed session keeps it.
func (a *AgentSession) SetName(name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return ErrEmptyName
	}
	if a.store != nil {
		return a.store.SetName(name)
	}
	a.mu.Lock()
	a.name = name
	a.mu.Unlock()
	return nil
}

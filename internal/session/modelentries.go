package session

import (
	"encoding/json"
	"errors"
)

// Entry types of the model and thinking level changes (the reference's).
const (
	entryModelChange         = "model_change"          // {"type":"model_change","timestamp":…,"model":"provider/id"}
	entryThinkingLevelChange = "thinking_level_change" // {"type":"thinking_level_change","timestamp":…,"thinkingLevel":"high"}
)

// modelChangeEntry is a model_change or thinking_level_change line.
type modelChangeEntry struct {
	EntryBase
	Model         string `json:"model,omitempty"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
}

// applyModelEntry notes a model_change or thinking_level_change line in s.
func (s *Session) applyModelEntry(line []byte) error {
	var e modelChangeEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return err
	}
	if e.Type == entryModelChange {
		if e.Model == "" {
			return errors.New(`model_change entry without "model"`)
		}
		s.Model = e.Model
		return nil
	}
	s.ThinkingLevel = e.ThinkingLevel
	if s.ThinkingLevel == "" {
		s.ThinkingLevel = "off"
	}
	return nil
}

// ModelState is the model ("provider/id") and thinking level the session
// recorded last ("" when none).
func (s *Store) ModelState() (model, level string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model, s.thinkingLevel
}

// AppendModelChange records a switch to model ("provider/id").
func (s *Store) AppendModelChange(model string) error {
	return s.appendChange(func(base EntryBase) any {
		base.Type = entryModelChange
		return modelChangeEntry{EntryBase: base, Model: model}
	}, func() { s.model = model })
}

// AppendThinkingLevelChange records a change of the thinking level.
func (s *Store) AppendThinkingLevelChange(level string) error {
	return s.appendChange(func(base EntryBase) any {
		base.Type = entryThinkingLevelChange
		return modelChangeEntry{EntryBase: base, ThinkingLevel: level}
	}, func() { s.thinkingLevel = level })
}

// appendChange writes a change entry. A new session's file does not exist
// before its first message: the entry waits until then (a session in which
// nothing was said leaves nothing behind), and is written with it.
func (s *Store) appendChange(build func(EntryBase) any, note func()) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return errors.New("session: store is closed")
	}
	if s.f == nil {
		s.pending = append(s.pending, build)
		note()
		s.mu.Unlock()
		return nil
	}
	s.mu.Unlock()
	if _, err := s.appendEntry(build); err != nil {
		return err
	}
	s.mu.Lock()
	note()
	s.mu.Unlock()
	return nil
}

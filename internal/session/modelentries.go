package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Entry types of the model and thinking level changes (the reference's).
const (
	entryModelChange         = "model_change"          // {"type":"model_change","timestamp":…,"model":"provider/id"}
	entryThinkingLevelChange = "thinking_level_change" // {"type":"thinking_level_change","timestamp":…,"thinkingLevel":"high"}
)

// modelChangeEntry is a model_change or thinking_level_change line.
type modelChangeEntry struct {
	Type          string `json:"type"`
	Timestamp     string `json:"timestamp"`
	Model         string `json:"model,omitempty"`
	ThinkingLevel string `json:"thinkingLevel,omitempty"`
}

// decodeModelEntry reads line when it is a model or thinking level change
// (handled), noting the change in s.
func (s *Session) decodeModelEntry(line []byte) (handled bool, err error) {
	if !bytes.Contains(line, []byte(entryModelChange)) && !bytes.Contains(line, []byte(entryThinkingLevelChange)) {
		return false, nil
	}
	var e modelChangeEntry
	if json.Unmarshal(line, &e) != nil {
		return false, nil // not an object: decodeEntry says why
	}
	switch e.Type {
	case entryModelChange:
		if e.Model == "" {
			return true, errors.New(`model_change entry without "model"`)
		}
		s.Model = e.Model
	case entryThinkingLevelChange:
		s.ThinkingLevel = e.ThinkingLevel
		if s.ThinkingLevel == "" {
			s.ThinkingLevel = "off"
		}
	default:
		return false, nil
	}
	return true, nil
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
	return s.appendEntry(modelChangeEntry{Type: entryModelChange, Model: model}, func() { s.model = model })
}

// AppendThinkingLevelChange records a change of the thinking level.
func (s *Store) AppendThinkingLevelChange(level string) error {
	return s.appendEntry(modelChangeEntry{Type: entryThinkingLevelChange, ThinkingLevel: level}, func() { s.thinkingLevel = level })
}

// appendEntry writes e as one line. A new session's file does not exist
// before its first message: the line waits until then (a session in which
// nothing was said leaves nothing behind), and is written with it.
func (s *Store) appendEntry(e modelChangeEntry, note func()) error {
	e.Timestamp = time.Now().UTC().Format("2006-01-02T15:04:05.000Z")
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("session: store is closed")
	}
	if s.f == nil {
		s.pending = append(s.pending, line)
		note()
		return nil
	}
	if err := s.writeLine(line); err != nil {
		return fmt.Errorf("session: append: %w", err)
	}
	note()
	return nil
}

// withPending puts the entries waiting for the file before line.
func (s *Store) withPending(line []byte) []byte {
	if len(s.pending) == 0 {
		return line
	}
	var b []byte
	for _, p := range s.pending {
		b = append(append(b, p...), '\n')
	}
	return append(b, line...)
}

package session

import (
	"encoding/json"
	"fmt"
	"time"
)

// RoleCompactionSummary is the role of the summary that stands for the
// compacted part of a conversation.
const RoleCompactionSummary = "compactionSummary"

// CompactionSummaryMessage is the summary of the compacted part of the
// conversation, first in the session's messages after a compaction. The
// model reads it as a user message (ContextMessages).
type CompactionSummaryMessage struct {
	Summary      string `json:"summary"`
	TokensBefore int64  `json:"tokensBefore"`
	TokensAfter  int64  `json:"tokensAfter,omitempty"`
	Timestamp    int64  `json:"timestamp"` // Unix milliseconds
}

// Role implements Message.
func (*CompactionSummaryMessage) Role() string { return RoleCompactionSummary }

func (*CompactionSummaryMessage) isMessage() {}

func marshalCompactionSummary(m *CompactionSummaryMessage) ([]byte, error) {
	return json.Marshal(struct {
		Role string `json:"role"`
		*CompactionSummaryMessage
	}{RoleCompactionSummary, m})
}

func unmarshalCompactionSummary(data []byte) (Message, error) {
	var m CompactionSummaryMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("message (%s): %w", RoleCompactionSummary, err)
	}
	return &m, nil
}

// CompactionEntry is a session file's record of a compaction, in the
// reference's shape: the messages before FirstKeptEntryID are represented by
// Summary from then on.
type CompactionEntry struct {
	EntryBase
	Summary          string             `json:"summary"`
	FirstKeptEntryID string             `json:"firstKeptEntryId"`
	TokensBefore     int64              `json:"tokensBefore"`
	TokensAfter      int64              `json:"tokensAfter,omitempty"`
	Details          *CompactionDetails `json:"details,omitempty"`
}

// CompactionDetails counts the messages a compaction summarized and kept.
type CompactionDetails struct {
	SummarizedMessages int `json:"summarizedMessages"`
	KeptMessages       int `json:"keptMessages"`
}

// Context is the conversation a resumed session continues from: after a
// compaction, its summary followed by the messages from the first kept one
// on; otherwise every message. A compaction whose first kept entry is not
// in the file keeps only what came after it.
func (s *Session) Context() []Message {
	if s.Compaction == nil {
		return append([]Message(nil), s.Messages...)
	}
	c := s.Compaction
	from := s.CompactionAt
	for i := 0; i < s.CompactionAt; i++ {
		if s.EntryIDs[i] == c.FirstKeptEntryID {
			from = i
			break
		}
	}
	sm := &CompactionSummaryMessage{Summary: c.Summary, TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter}
	if t, err := time.Parse(time.RFC3339Nano, c.Timestamp); err == nil {
		sm.Timestamp = t.UnixMilli()
	}
	return append([]Message{sm}, s.Messages[from:]...)
}

// AppendCompaction writes a compaction entry (its id, parentId and
// timestamp are the store's) and returns the entry as written.
func (s *Store) AppendCompaction(c CompactionEntry) (CompactionEntry, error) {
	_, err := s.appendEntry(func(base EntryBase) any {
		base.Type = entryCompaction
		c.EntryBase = base
		return c
	})
	return c, err
}

package rpc

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"agentsh/internal/agent"
	"agentsh/internal/session"
)

// negotiate is negotiate_protocol: agentsh speaks ProtocolVersion only.
func (s *server) negotiate(c *command) {
	var v float64
	if json.Unmarshal(c.ProtocolVersion, &v) != nil || v != ProtocolVersion {
		got := strings.TrimSpace(string(c.ProtocolVersion))
		if got == "" {
			got = "undefined"
		}
		s.fail(c, fmt.Errorf("Unsupported RPC protocol version: %s", got)) //lint:ignore ST1005 the reference's text
		return
	}
	s.ok(c, map[string]int{"protocolVersion": ProtocolVersion})
}

// setQueueMode is set_steering_mode, set_follow_up_mode and
// set_interrupt_mode {mode}, for this session and the ones after it.
func (s *server) setQueueMode(c *command) {
	mode := ""
	if c.Mode != nil {
		mode = *c.Mode
	}
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	var err error
	switch *c.Type {
	case CmdSetSteeringMode:
		err = sess.SetSteeringMode(mode)
	case CmdSetFollowUpMode:
		err = sess.SetFollowUpMode(mode)
	default:
		err = sess.SetInterruptMode(mode)
	}
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, nil)
}

// Paging of get_messages_page, as the reference pages.
const (
	defaultPageLimit = 100
	maxPageLimit     = 256
	maxPageBytes     = 768 * 1024 // a page's messages stop growing past this
	maxCursorChars   = 2048
)

// The reference's texts of get_messages_page's errors.
var (
	errPageBusy   = errors.New("Cannot page messages while the session is changing") //lint:ignore ST1005 the reference's text
	errPageStale  = errors.New("RPC message cursor is stale")
	errPageCursor = errors.New("Invalid RPC message cursor") //lint:ignore ST1005 the reference's text
	errPageLimit  = fmt.Errorf("RPC message page limit must be between 1 and %d", maxPageLimit)
)

// pageCursor is a get_messages_page cursor, base64url JSON as the
// reference's: the conversation it pages (session, leaf, message count)
// and where the next page starts. agentsh's sessions have no branches, so
// leafId is always null.
type pageCursor struct {
	Version      int     `json:"version"`
	SessionID    string  `json:"sessionId"`
	LeafID       *string `json:"leafId"`
	MessageCount int     `json:"messageCount"`
	Offset       int     `json:"offset"`
}

func decodeCursor(text string) (pageCursor, error) {
	var c pageCursor
	if text == "" || len(text) > maxCursorChars {
		return c, errPageCursor
	}
	raw, err := base64.RawURLEncoding.Strict().DecodeString(text)
	if err != nil {
		return c, errPageCursor
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if d.Decode(&c) != nil || c.Version != 1 || c.SessionID == "" || c.MessageCount < 0 || c.Offset < 0 || c.Offset > c.MessageCount {
		return c, errPageCursor
	}
	return c, nil
}

func encodeCursor(c pageCursor) string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

// getMessagesPage is get_messages_page {cursor?, limit?}: the conversation
// from the start, at most limit messages (and about 768 KB) a page;
// nextCursor continues it while messages are left. A cursor is good for the
// conversation as it was: once a message was added it is stale.
func (s *server) getMessagesPage(c *command) {
	s.mu.Lock()
	sess, streaming := s.sess, s.prompt != nil
	s.mu.Unlock()
	if streaming {
		s.failCode(c, errPageBusy, "session_busy")
		return
	}
	limit := defaultPageLimit
	if c.Limit != nil {
		l := *c.Limit
		if l != math.Trunc(l) || l < 1 || l > maxPageLimit {
			s.fail(c, errPageLimit)
			return
		}
		limit = int(l)
	}
	msgs := sess.Messages()
	snap := pageCursor{Version: 1, SessionID: sess.ID(), MessageCount: len(msgs)}
	offset := 0
	if c.Cursor != nil {
		cur, err := decodeCursor(*c.Cursor)
		if err != nil {
			s.fail(c, err)
			return
		}
		if cur.SessionID != snap.SessionID || cur.LeafID != nil || cur.MessageCount != snap.MessageCount {
			s.failCode(c, errPageStale, "stale_cursor")
			return
		}
		offset = cur.Offset
	}
	page := []json.RawMessage{}
	size := 2
	for offset+len(page) < len(msgs) && len(page) < limit {
		b, err := session.MarshalMessage(msgs[offset+len(page)])
		if err != nil {
			s.fail(c, err)
			return
		}
		n := len(b)
		if len(page) > 0 {
			n++
		}
		if len(page) > 0 && size+n > maxPageBytes {
			break
		}
		page = append(page, b)
		size += n
	}
	data := struct {
		Messages      []json.RawMessage `json:"messages"`
		NextCursor    string            `json:"nextCursor,omitempty"`
		TotalMessages int               `json:"totalMessages"`
	}{Messages: page, TotalMessages: len(msgs)}
	if next := offset + len(page); next < len(msgs) {
		snap.Offset = next
		data.NextCursor = encodeCursor(snap)
	}
	s.ok(c, data)
}

// getLastAssistantText is get_last_assistant_text: the text of the latest
// answer (an aborted one with nothing in it is passed over), trimmed; null
// when there is none or it has no text.
func (s *server) getLastAssistantText(c *command) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	var text *string
	msgs := sess.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		a, ok := msgs[i].(*session.AssistantMessage)
		if !ok {
			continue
		}
		if a.StopReason == "aborted" && a.Text == "" && len(a.ToolCalls) == 0 && len(a.Thinking) == 0 {
			continue
		}
		if t := strings.TrimSpace(a.Text); t != "" {
			text = &t
		}
		break
	}
	s.ok(c, map[string]*string{"text": text})
}

// SessionStats is get_session_stats' data, the reference's shape: message
// counts by role and the tokens and cost the provider reported for each
// answer.
type SessionStats struct {
	SessionFile       string      `json:"sessionFile,omitempty"`
	SessionID         string      `json:"sessionId"`
	UserMessages      int         `json:"userMessages"`
	AssistantMessages int         `json:"assistantMessages"`
	ToolCalls         int         `json:"toolCalls"`
	ToolResults       int         `json:"toolResults"`
	TotalMessages     int         `json:"totalMessages"`
	Tokens            StatsTokens `json:"tokens"`
	PremiumRequests   int         `json:"premiumRequests"`
	Cost              float64     `json:"cost"`
	// ContextUsage is how full the model's context is (nil without a
	// model).
	ContextUsage *agent.ContextUsage `json:"contextUsage,omitempty"`
}

// StatsTokens sums the answers' usage.
type StatsTokens struct {
	Input      int64 `json:"input"`
	Output     int64 `json:"output"`
	Reasoning  int64 `json:"reasoning"`
	CacheRead  int64 `json:"cacheRead"`
	CacheWrite int64 `json:"cacheWrite"`
	Total      int64 `json:"total"`
}

// Stats counts msgs as get_session_stats does.
func Stats(msgs []session.Message) SessionStats {
	var st SessionStats
	st.TotalMessages = len(msgs)
	for _, m := range msgs {
		switch v := m.(type) {
		case *session.UserMessage:
			st.UserMessages++
		case *session.ToolResultMessage:
			st.ToolResults++
		case *session.AssistantMessage:
			st.AssistantMessages++
			st.ToolCalls += len(v.ToolCalls)
			if u := v.Usage; u != nil {
				st.Tokens.Input += u.Input
				st.Tokens.Output += u.Output
				st.Tokens.Reasoning += u.ReasoningTokens
				st.Tokens.CacheRead += u.CacheRead
				st.Tokens.CacheWrite += u.CacheWrite
				st.Tokens.Total += u.TotalTokens
				st.Cost += u.Cost.Total
			}
		}
	}
	return st
}

func (s *server) getSessionStats(c *command) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	st := Stats(sess.Messages())
	st.SessionID = sess.ID()
	st.ContextUsage = s.contextUsage(sess)
	if store := sess.Store(); store != nil {
		st.SessionFile = store.Path()
	}
	s.ok(c, st)
}

// setSessionName is set_session_name {name}: persisted in the session file.
func (s *server) setSessionName(c *command) {
	name := ""
	if c.Name != nil {
		name = *c.Name
	}
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	if err := sess.SetName(name); err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, nil)
}

// switchSession is switch_session {sessionPath}: like new_session, but the
// session is the saved one at sessionPath, its conversation loaded (the
// next prompt carries it) and its file appended to from then on. The file
// is read beside the command loop (a long session takes a while): the
// commands after it wait for it, but for get_state (which describes the
// session before the switch until it answers) and the aborts sent before
// any other (Serve).
func (s *server) switchSession(c *command) <-chan struct{} {
	if s.cfg.OpenSession == nil {
		s.fail(c, errors.New("switch_session is not available in this mode"))
		return nil
	}
	if c.SessionPath == nil || strings.TrimSpace(*c.SessionPath) == "" {
		s.fail(c, errors.New(`switch_session needs a "sessionPath"`))
		return nil
	}
	path := *c.SessionPath
	return s.fileWork(func() {
		s.stopWork()
		sess, err := s.cfg.OpenSession(path)
		if err != nil {
			s.fail(c, err)
			return
		}
		s.adopt(sess)
		s.ok(c, map[string]bool{"cancelled": false})
	})
}

// AvailableCommand is one entry of get_available_commands, the reference's
// RpcAvailableSlashCommand.
type AvailableCommand struct {
	Name        string             `json:"name"`
	Description string             `json:"description,omitempty"`
	Input       *AvailableCmdInput `json:"input,omitempty"`
	Source      string             `json:"source"`
}

// AvailableCmdInput is what a command takes.
type AvailableCmdInput struct {
	Hint string `json:"hint,omitempty"`
}

// availableCommands lists agentsh's slash commands (the TUI's).
func availableCommands() []AvailableCommand {
	out := make([]AvailableCommand, 0, len(agent.SlashCommands))
	for _, sc := range agent.SlashCommands {
		ac := AvailableCommand{Name: sc.Name, Description: sc.Description, Source: "builtin"}
		if sc.Args != "" {
			ac.Input = &AvailableCmdInput{Hint: sc.Args}
		}
		out = append(out, ac)
	}
	return out
}

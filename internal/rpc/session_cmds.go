package rpc

// The session's commands: a fresh one, another saved one, its name, and
// reading its conversation and statistics.

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

// Session command types.
const (
	CmdNewSession           = "new_session"
	CmdSwitchSession        = "switch_session"
	CmdSetSessionName       = "set_session_name"
	CmdGetMessages          = "get_messages"
	CmdGetMessagesPage      = "get_messages_page"
	CmdGetLastAssistantText = "get_last_assistant_text"
	CmdGetSessionStats      = "get_session_stats"
)

func init() {
	register(
		cmd(CmdNewSession, (*server).newSession),
		fileCmd(CmdSwitchSession, (*server).switchSession),
		cmd(CmdSetSessionName, (*server).setSessionName),
		cmd(CmdGetMessages, (*server).getMessages),
		cmd(CmdGetMessagesPage, (*server).getMessagesPage),
		cmd(CmdGetLastAssistantText, (*server).getLastAssistantText),
		cmd(CmdGetSessionStats, (*server).getSessionStats),
	)
}

// newSessionParams is new_session {parentSession?}.
type newSessionParams struct {
	ParentSession *string `json:"parentSession"`
}

// switchSessionParams is switch_session {sessionPath}.
type switchSessionParams struct {
	SessionPath *string `json:"sessionPath"`
}

// sessionNameParams is set_session_name {name}.
type sessionNameParams struct {
	Name *string `json:"name"`
}

// messagesPageParams is get_messages_page {cursor?, limit?}.
type messagesPageParams struct {
	Cursor *string  `json:"cursor"`
	Limit  *float64 `json:"limit"`
}

func (s *server) getMessages(c *command, _ *noParams) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	msgs := sess.Messages()
	raw := make([]json.RawMessage, 0, len(msgs))
	for _, m := range msgs {
		b, err := session.MarshalMessage(m)
		if err != nil {
			s.fail(c, err)
			return
		}
		raw = append(raw, b)
	}
	s.ok(c, map[string]any{"messages": raw})
}

// newSession stops the running prompt and bash commands, waits for them,
// then switches to a fresh session from the factory (the old one stays on
// failure).
func (s *server) newSession(c *command, p *newSessionParams) {
	s.stopWork()
	sess, err := s.cfg.NewSession()
	if err != nil {
		s.fail(c, err)
		return
	}
	if p.ParentSession != nil && *p.ParentSession != "" {
		if store := sess.Store(); store != nil {
			store.SetParentSession(*p.ParentSession)
		}
	}
	s.adopt(sess)
	s.ok(c, map[string]bool{"cancelled": false})
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
func (s *server) getMessagesPage(c *command, p *messagesPageParams) {
	s.mu.Lock()
	sess, streaming := s.sess, s.runner.Busy()
	s.mu.Unlock()
	if streaming {
		s.failCode(c, errPageBusy, "session_busy")
		return
	}
	limit := defaultPageLimit
	if p.Limit != nil {
		l := *p.Limit
		if l != math.Trunc(l) || l < 1 || l > maxPageLimit {
			s.fail(c, errPageLimit)
			return
		}
		limit = int(l)
	}
	msgs := sess.Messages()
	snap := pageCursor{Version: 1, SessionID: sess.ID(), MessageCount: len(msgs)}
	offset := 0
	if p.Cursor != nil {
		cur, err := decodeCursor(*p.Cursor)
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
func (s *server) getLastAssistantText(c *command, _ *noParams) {
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

func (s *server) getSessionStats(c *command, _ *noParams) {
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
func (s *server) setSessionName(c *command, p *sessionNameParams) {
	name := ""
	if p.Name != nil {
		name = *p.Name
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
func (s *server) switchSession(c *command, p *switchSessionParams) <-chan struct{} {
	if s.cfg.OpenSession == nil {
		s.fail(c, errors.New("switch_session is not available in this mode"))
		return nil
	}
	if p.SessionPath == nil || strings.TrimSpace(*p.SessionPath) == "" {
		s.fail(c, errors.New(`switch_session needs a "sessionPath"`))
		return nil
	}
	path := *p.SessionPath
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

package session

import (
	"agentsh/internal/xdg"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// PromptPreviewRunes bounds Info.FirstPrompt: enough to recognise a
// conversation in a one-line list.
const PromptPreviewRunes = 80

// Info describes one saved session, as a session picker lists it.
type Info struct {
	ID          string
	Path        string
	Modified    time.Time // the file's last write
	FirstPrompt string    // the first user prompt (or !command) on one line, cut to PromptPreviewRunes
	Messages    int       // the messages a resume would load
	Name        string    // the session's name (set_session_name), "" if none
}

// List returns the sessions of cwd that hold at least one message, newest
// (last written) first.
func List(cwd string) ([]Info, error) { return ListIn(SessionsDir(cwd)) }

// ListIn is List for the session files of dir. Files that cannot be read
// or do not start with a session header are left out, as are sessions
// without a message (nothing to resume).
func ListIn(dir string) ([]Info, error) {
	files, err := listSessionFiles(dir)
	if err != nil {
		return nil, err
	}
	sortNewestFirst(files)
	out := make([]Info, 0, len(files))
	for _, f := range files {
		info, err := scanInfo(f)
		if err != nil || info.Messages == 0 {
			continue
		}
		out = append(out, info)
	}
	return out, nil
}

// entryPrefix starts every message line an older agentsh wrote (messageEntry
// with MarshalMessage's role first); newer lines start with entryIDPrefix
// and have their id, parentId and timestamp before entryMessageKey.
var (
	entryPrefix     = []byte(`{"type":"message","message":{"role":"`)
	entryIDPrefix   = []byte(`{"type":"message","id":"`)
	entryMessageKey = []byte(`,"message":{"role":"`)
)

// lineRole returns the role of a message line. Lines as written here are
// read by their prefix and their closing braces, so listing does not parse
// every tool output of every session (a cut line lacks the braces); any
// other line is decoded.
func lineRole(line []byte) (string, bool) {
	rest, ok := bytes.CutPrefix(line, entryPrefix)
	if !ok && bytes.HasPrefix(line, entryIDPrefix) {
		// The id, parentId and timestamp hold no such text: the first
		// match is the message's.
		if i := bytes.Index(line, entryMessageKey); i >= 0 {
			rest, ok = line[i+len(entryMessageKey):], true
		}
	}
	if ok {
		i := bytes.IndexByte(rest, '"')
		if i < 0 || !bytes.HasSuffix(line, []byte("}}")) {
			return "", false
		}
		return string(rest[:i]), true
	}
	var h struct {
		Type    string `json:"type"`
		Message struct {
			Role string `json:"role"`
		} `json:"message"`
	}
	if json.Unmarshal(line, &h) != nil || h.Type != entryMessage {
		return "", false
	}
	return h.Message.Role, true
}

// scanInfo reads one session file: its header, the number of entries that
// are messages of a known role, and the first prompt. A corrupt line, or
// one cut by a crash, is not counted.
func scanInfo(f sessionFile) (Info, error) {
	info := Info{ID: f.id, Path: f.path, Modified: f.mod}
	err := eachLine(f.path, func(n int, line []byte) bool {
		if n == 1 {
			return true
		}
		role, ok := lineRole(line)
		if !ok {
			if title, ok := titleOf(line); ok {
				info.Name = title
			}
			return true
		}
		switch role {
		case RoleUser, RoleAssistant, RoleToolResult, RoleBashExecution:
		default:
			return true
		}
		if info.FirstPrompt == "" {
			if m, err := decodeEntry(line); err == nil {
				info.FirstPrompt = promptPreview(m)
			} else {
				return true
			}
		}
		info.Messages++
		return true
	})
	return info, err
}

// hasMessage reports whether the session file at path holds at least one
// message that Load would keep; it stops reading at the first.
func hasMessage(path string) bool {
	found := false
	_ = eachLine(path, func(n int, line []byte) bool {
		if n > 1 {
			if _, err := decodeEntry(line); err == nil {
				found = true
			}
		}
		return !found
	})
	return found
}

// eachLine calls fn with every non-blank line of a session file (1-based
// numbers) until fn returns false. The first line must be a session header.
func eachLine(path string, fn func(n int, line []byte) bool) error {
	f, err := xdg.OpenRegular(path)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	lr := newLineReader(f, MaxEntryBytes)
	for n := 1; ; n++ {
		line, err := lr.next()
		var long *errLongLine
		switch {
		case errors.Is(err, io.EOF) && n == 1:
			return fmt.Errorf("session: %s: empty file", path)
		case errors.Is(err, io.EOF):
			return nil
		case errors.As(err, &long) && n > 1:
			continue // as a corrupt line: not counted
		case err != nil:
			return fmt.Errorf("session: %s:%d: %w", path, n, err)
		}
		if n == 1 {
			var h Header
			if json.Unmarshal(line, &h) != nil || h.Type != entrySession {
				return fmt.Errorf("session: %s:1: not a session header", path)
			}
			if !ValidID(h.ID) {
				return fmt.Errorf("session: %s:1: not a session id", path)
			}
		}
		if len(bytes.TrimSpace(line)) > 0 && !fn(n, line) {
			return nil
		}
	}
}

// promptPreview is the one-line text a list shows for the first message
// of a session: a user prompt, or the user's !command; "" for anything
// else (an answer cannot come first, but a file may be edited by hand).
func promptPreview(m Message) string {
	var s string
	switch v := m.(type) {
	case *UserMessage:
		s = v.Text
	case *BashExecutionMessage:
		s = "!" + v.Command
		if v.ExcludeFromContext {
			s = "!" + s
		}
	default:
		return ""
	}
	return cutRunes(strings.Join(strings.Fields(s), " "), PromptPreviewRunes)
}

// cutRunes shortens s to at most n runes, the last one an ellipsis when
// something was cut.
func cutRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

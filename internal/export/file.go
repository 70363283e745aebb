package export

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"agentsh/internal/session"
)

// FromSession is the export input of a live session: its id, the
// directory it started in, its start time (the session file's header; the
// first message's time for a session kept in memory) and its messages as
// recorded.
func FromSession(a *session.AgentSession) ExportInput {
	in := ExportInput{SessionID: a.ID(), Cwd: a.StartDir(), Messages: a.Messages()}
	if st := a.Store(); st != nil {
		if t, err := time.Parse(time.RFC3339Nano, st.Header().Timestamp); err == nil {
			in.Start = t
		}
	}
	return in
}

// DefaultFileName is where an export goes when no path is given, relative
// to the session's directory: agentsh-session-<session file name>.html,
// the session file's name without .jsonl (its time and id), or the id for
// a session kept in memory.
func DefaultFileName(a *session.AgentSession) string {
	name := a.ID()
	if st := a.Store(); st != nil {
		name = strings.TrimSuffix(filepath.Base(st.Path()), ".jsonl")
	}
	return "agentsh-session-" + name + ".html"
}

// WriteSession writes a's transcript to outputPath, or to DefaultFileName
// when it is "", and returns the absolute path written. A relative path is
// taken from the session's current directory (where its shell's cd left
// it); missing parent folders are made.
func WriteSession(a *session.AgentSession, outputPath string) (string, error) {
	if outputPath == "" {
		outputPath = DefaultFileName(a)
	}
	if !filepath.IsAbs(outputPath) {
		outputPath = filepath.Join(a.Cwd(), outputPath)
	}
	outputPath = filepath.Clean(outputPath)
	var b bytes.Buffer
	if err := HTML(&b, FromSession(a)); err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(outputPath), 0o755); err != nil {
		return "", fmt.Errorf("export html: %w", err)
	}
	if err := os.WriteFile(outputPath, b.Bytes(), 0o644); err != nil {
		return "", fmt.Errorf("export html: %w", err)
	}
	return outputPath, nil
}

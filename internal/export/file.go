package export

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/session"
)

// FromSession is the export input of a live session: its id, the
// directory it started in, its start time (the session file's header; the
// first message's time for a session kept in memory) and its messages.
// A compacted session continues from a summary, but its file keeps every
// message: the export is the whole history, read back from the file, with
// the summary where the compaction took place. (A session kept in memory,
// or one whose file cannot be read, exports what it holds.)
func FromSession(a *agent.AgentSession) ExportInput {
	in := ExportInput{SessionID: a.ID(), Cwd: a.StartDir(), Messages: a.Messages()}
	st := a.Store()
	if st == nil {
		return in
	}
	if t, err := time.Parse(time.RFC3339Nano, st.Header().Timestamp); err == nil {
		in.Start = t
	}
	if !startsWithSummary(in.Messages) {
		return in
	}
	if full, _, err := session.Load(st.Path()); err == nil {
		in.Messages = full.Messages
		if c := full.Compaction; c != nil {
			// Before the first message kept: what precedes it is what the
			// summary stands for.
			at := min(full.CompactionAt, len(full.Messages))
			for i, id := range full.EntryIDs {
				if id == c.FirstKeptEntryID {
					at = i
					break
				}
			}
			marker := &session.CompactionSummaryMessage{Summary: c.Summary, TokensBefore: c.TokensBefore, TokensAfter: c.TokensAfter}
			in.Messages = append(append(append([]session.Message(nil), full.Messages[:at]...), marker), full.Messages[at:]...)
		}
	}
	return in
}

// startsWithSummary reports whether msgs start from a compaction's summary.
func startsWithSummary(msgs []session.Message) bool {
	if len(msgs) == 0 {
		return false
	}
	_, ok := msgs[0].(*session.CompactionSummaryMessage)
	return ok
}

// DefaultFileName is where an export goes when no path is given, relative
// to the session's directory: agentsh-session-<session file name>.html,
// the session file's name without .jsonl (its time and id), or the id for
// a session kept in memory.
func DefaultFileName(a *agent.AgentSession) string {
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
func WriteSession(a *agent.AgentSession, outputPath string) (string, error) {
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
	if err := writeRegular(outputPath, b.Bytes()); err != nil {
		return "", fmt.Errorf("export html: %w", err)
	}
	return outputPath, nil
}

// writeRegular writes data to path, made if missing, which must be a
// regular file: a FIFO (or /dev/stdin, the RPC client's own pipe) would
// hold the caller or feed the page back as commands, a device swallow it.
// It opens without blocking and truncates only once it knows what it
// opened.
func writeRegular(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|syscall.O_NONBLOCK, 0o644)
	if errors.Is(err, syscall.ENXIO) {
		// A FIFO nobody reads (or a device without its driver) refuses a
		// non-blocking open: not a regular file either way.
		return fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		return err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err == nil {
		err = f.Truncate(0)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

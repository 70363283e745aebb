package session

import (
	"agentsh/internal/xdg"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// SessionVersion is the format version written in every session header.
const SessionVersion = 1

// sessionExt ends every session file name; the artifact folder is the same
// path without it.
const sessionExt = ".jsonl"

// Entry types of a session file's lines.
const (
	entrySession    = "session"    // the header, line 1
	entryMessage    = "message"    // {"type":"message","id":…,"parentId":…,"timestamp":…,"message":{"role":…}}
	entryCompaction = "compaction" // CompactionEntry: older messages summarized (compact.go)
	// entryTitle names the session, as the reference's set_session_name
	// does: {"type":"title_change",…,"title":…,"source":"user"}. The last
	// one is the session's name.
	entryTitle = "title_change"
)

// ErrNoSession is returned by Newest when the cwd has no session with a
// message.
var ErrNoSession = errors.New("no session found")

// Header is the first line of a session file.
type Header struct {
	Type      string `json:"type"` // always "session"
	Version   int    `json:"version"`
	ID        string `json:"id"`
	Timestamp string `json:"timestamp"` // RFC 3339, UTC, milliseconds
	Cwd       string `json:"cwd"`
	// ParentSession is the session this one was started from (an RPC
	// client's new_session parentSession), as the client gave it.
	ParentSession string `json:"parentSession,omitempty"`
}

// titleEntry is a title_change line.
type titleEntry struct {
	EntryBase
	Title         string `json:"title"`
	PreviousTitle string `json:"previousTitle,omitempty"`
	Source        string `json:"source"` // "user"
}

// titleOf returns the title of a title_change line.
func titleOf(line []byte) (string, bool) {
	if !bytes.Contains(line, []byte(`"`+entryTitle+`"`)) {
		return "", false
	}
	var e titleEntry
	if json.Unmarshal(line, &e) != nil || e.Type != entryTitle || e.Title == "" {
		return "", false
	}
	return e.Title, true
}

// EntryBase starts every entry line after the header, as the reference's
// session entries do: the entry's id (8 hex digits), the id of the entry
// before it (null for the first) and when it was written. Lines written by
// an older agentsh have none of these; Load gives them stable ids made from
// the session id and the line number.
type EntryBase struct {
	Type      string  `json:"type"`
	ID        string  `json:"id"`
	ParentID  *string `json:"parentId"`  // null for the first entry
	Timestamp string  `json:"timestamp"` // RFC 3339, UTC, milliseconds
}

// messageEntry wraps a message on its line.
type messageEntry struct {
	EntryBase
	Message json.RawMessage `json:"message"`
}

// Session is the content of a session file as loaded.
type Session struct {
	Path     string
	Header   Header
	Messages []Message // the whole history, compacted or not
	// EntryIDs are the entry ids of Messages, index for index.
	EntryIDs []string
	// Compaction is the newest compaction entry, nil when the session was
	// never compacted; CompactionAt is how many of Messages came before it.
	Compaction   *CompactionEntry
	CompactionAt int
	Name         string // the last title_change's title ("" = never named)
	lastID       string // the id of the last entry, the parent of the next one
	// Model and ThinkingLevel are the last model_change and
	// thinking_level_change entries ("" when none).
	Model, ThinkingLevel string
}

// ArtifactsDir is the artifact folder beside the session file.
func (s *Session) ArtifactsDir() string { return ArtifactsDirFor(s.Path) }

// ArtifactsDirFor returns the artifact folder of a session file: its path
// without ".jsonl".
func ArtifactsDirFor(sessionPath string) string {
	return strings.TrimSuffix(sessionPath, sessionExt)
}

// LoadError describes a line of a session file that could not be used. The
// line is skipped; everything else is loaded.
type LoadError struct {
	Path string
	Line int // 1-based
	Err  error
}

func (e LoadError) Error() string {
	return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
}

// Load reads a session file. Lines that are not valid entries come back as
// LoadErrors with their line numbers and are skipped; the error return is for
// a file that cannot be read or whose first line is not a session header.
// Blank lines are ignored.
//
// The file is read one line at a time, never whole, so a large session
// costs about the memory its messages take; a line longer than
// MaxEntryBytes is skipped (a LoadError) without being held.
func Load(path string) (*Session, []LoadError, error) {
	// A FIFO or a device named as a session (switch_session, -r PATH)
	// would hold the caller, or fill memory from /dev/zero.
	f, err := xdg.OpenRegular(path)
	if err != nil {
		return nil, nil, fmt.Errorf("session: %w", err)
	}
	defer f.Close()
	s := &Session{Path: path}
	var errs []LoadError
	lr := newLineReader(f, MaxEntryBytes)
	lineNo := 0
	for {
		line, err := lr.next()
		if errors.Is(err, io.EOF) {
			break
		}
		lineNo++
		var long *errLongLine
		switch {
		case errors.As(err, &long) && lineNo > 1:
			errs = append(errs, LoadError{Path: path, Line: lineNo, Err: err})
			continue
		case errors.As(err, &long):
			return nil, nil, fmt.Errorf("session: %s:1: not a session header: %w", path, err)
		case err != nil:
			return nil, nil, fmt.Errorf("session: read %s: %w", path, err)
		}
		if lineNo == 1 {
			if err := json.Unmarshal(line, &s.Header); err != nil || s.Header.Type != entrySession {
				if err == nil {
					err = fmt.Errorf("entry type %q, want %q", s.Header.Type, entrySession)
				}
				return nil, nil, fmt.Errorf("session: %s:1: not a session header: %w", path, err)
			}
			if s.Header.Version > SessionVersion {
				return nil, nil, fmt.Errorf("session: %s: version %d is newer than this agentsh understands (%d)", path, s.Header.Version, SessionVersion)
			}
			if !ValidID(s.Header.ID) {
				return nil, nil, fmt.Errorf("session: %s:1: %q is not a session id (letters, digits, - and _, at most 128)", path, s.Header.ID)
			}
			continue
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if err := s.decodeLine(line, lineNo); err != nil {
			errs = append(errs, LoadError{Path: path, Line: lineNo, Err: err})
		}
	}
	if lineNo == 0 {
		return nil, nil, fmt.Errorf("session: %s: empty file", path)
	}
	return s, errs, nil
}

func decodeEntry(line []byte) (Message, error) {
	var e messageEntry
	if err := json.Unmarshal(line, &e); err != nil {
		return nil, err
	}
	if e.Type != entryMessage {
		return nil, fmt.Errorf("unknown entry type %q", e.Type)
	}
	if len(e.Message) == 0 {
		return nil, errors.New(`message entry without "message"`)
	}
	return UnmarshalMessage(e.Message)
}

// decodeLine reads entry line lineNo into s by its type: a message, a
// compaction, the session's name, a model or thinking level change. The
// entry becomes the parent of the next; a line of an older agentsh has no
// id and gets a stable one (LegacyEntryID).
func (s *Session) decodeLine(line []byte, lineNo int) error {
	var base EntryBase
	if err := json.Unmarshal(line, &base); err != nil {
		return err
	}
	if base.ID == "" {
		base.ID = LegacyEntryID(s.Header.ID, lineNo)
	}
	var err error
	switch base.Type {
	case entryCompaction:
		c := &CompactionEntry{}
		if err = json.Unmarshal(line, c); err == nil && c.FirstKeptEntryID == "" {
			err = errors.New(`compaction entry without "firstKeptEntryId"`)
		}
		if err == nil {
			c.EntryBase = base
			s.Compaction, s.CompactionAt = c, len(s.Messages)
		}
	case entryTitle:
		var e titleEntry
		if err = json.Unmarshal(line, &e); err == nil && e.Title != "" {
			s.Name = e.Title
		}
	case entryModelChange, entryThinkingLevelChange:
		err = s.applyModelEntry(line)
	default:
		var m Message
		if m, err = decodeEntry(line); err == nil {
			s.Messages = append(s.Messages, m)
			s.EntryIDs = append(s.EntryIDs, base.ID)
		}
	}
	if err != nil {
		return err
	}
	s.lastID = base.ID
	return nil
}

// LegacyEntryID is the id of an entry line written without one: the same
// at every load, so a later entry can name it.
func LegacyEntryID(sessionID string, line int) string {
	return fmt.Sprintf("%08x", crc32.ChecksumIEEE([]byte(sessionID+":"+strconv.Itoa(line))))
}

// NewEntryID returns a random 8-hex-digit entry id.
func NewEntryID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read does not fail
	return hex.EncodeToString(b[:])
}

// entryTime is the timestamp of an entry written now.
func entryTime() string { return time.Now().UTC().Format("2006-01-02T15:04:05.000Z") }

// Store appends to one session file. It is safe for concurrent use.
//
// A new session's file is created by its first Append, not by Create: a
// session in which nothing was said leaves nothing behind, so opening
// agentsh just to look never hides the real conversation from --continue.
type Store struct {
	path   string
	header Header
	loaded *Session // what the file held when it was opened; nil for a new session

	mu     sync.Mutex
	f      *os.File // nil until the first Append of a new session
	needNL bool     // the file ends in a partial line: the next append starts with '\n'
	closed bool
	lastID string             // the last entry written or loaded: the next one's parentId
	ids    map[Message]string // entry ids of the messages written or loaded
	name   string             // the session's name (title_change), as loaded or last set

	model, thinkingLevel string                // the last model and thinking level changes
	pending              []func(EntryBase) any // change entries waiting for a new session's first message
}

// Create starts a new session of cwd in SessionsDir(cwd).
func Create(cwd string) (*Store, error) {
	return CreateIn(SessionsDir(cwd), cwd)
}

// CreateIn starts a new session <ts>_<id>.jsonl in dir. Nothing is written
// yet: the first Append creates the folder (0700) and the file with its
// header.
func CreateIn(dir, cwd string) (*Store, error) {
	now := time.Now().UTC()
	for range 5 {
		id, err := NewID()
		if err != nil {
			return nil, err
		}
		p := filepath.Join(dir, fileTimestamp(now)+"_"+id+sessionExt)
		if _, err := os.Lstat(p); err == nil {
			continue
		}
		h := Header{Type: entrySession, Version: SessionVersion, ID: id,
			Timestamp: now.Format("2006-01-02T15:04:05.000Z"), Cwd: cwd}
		return &Store{path: p, header: h}, nil
	}
	return nil, errors.New("session: could not pick a unique file name")
}

// create makes the file of a new session and writes its header followed by
// the first line, in one write: on any failure the file is removed again,
// so a later Append starts over instead of finding a header alone.
func (s *Store) create(line []byte) error {
	if err := os.MkdirAll(filepath.Dir(s.path), 0o700); err != nil {
		return fmt.Errorf("create folder: %w", err)
	}
	f, err := os.OpenFile(s.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create file: %w", err)
	}
	header, err := json.Marshal(s.header)
	if err == nil {
		buf := make([]byte, 0, len(header)+len(line)+2)
		buf = append(append(append(append(buf, header...), '\n'), line...), '\n')
		if _, err = f.Write(buf); err == nil {
			err = f.Sync()
		}
	}
	if err != nil {
		_ = f.Close()
		_ = os.Remove(s.path)
		return err
	}
	s.f = f
	return nil
}

// Open loads an existing session file and opens it for appending. Corrupt
// lines are reported and skipped (they stay in the file). If the file ends
// in a partial line (a crash mid-append), the next append starts with a
// newline, in the same write, so that entry stands alone; nothing is
// written before then, so opening a file on a full disk works.
func Open(path string) (*Store, []LoadError, error) {
	sess, errs, err := Load(path)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("session: %w", err)
	}
	s := &Store{path: path, header: sess.Header, loaded: sess, f: f, lastID: sess.lastID, name: sess.Name,
		model: sess.Model, thinkingLevel: sess.ThinkingLevel,
		ids: make(map[Message]string, len(sess.Messages))}
	for i, m := range sess.Messages {
		s.ids[m] = sess.EntryIDs[i]
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err != nil && err != io.EOF {
			_ = f.Close()
			return nil, nil, fmt.Errorf("session: %w", err)
		}
		s.needNL = last[0] != '\n'
	}
	return s, errs, nil
}

// Path returns the session file (not yet on disk while a new session has no
// message).
func (s *Store) Path() string { return s.path }

// ID returns the session id from the header.
func (s *Store) ID() string { return s.header.ID }

// Header returns the session header.
func (s *Store) Header() Header { return s.header }

// ArtifactsDir returns the artifact folder beside the session file.
func (s *Store) ArtifactsDir() string { return ArtifactsDirFor(s.path) }

// LoadedMessages returns the messages the file held when it was opened
// (none for a new session): the whole history, compacted or not.
func (s *Store) LoadedMessages() []Message {
	if s.loaded == nil {
		return nil
	}
	return append([]Message(nil), s.loaded.Messages...)
}

// LoadedContext returns the conversation a resumed session continues from:
// the history as loaded, or after a compaction its summary followed by the
// messages it kept and those written after it (Session.Context).
func (s *Store) LoadedContext() []Message {
	if s.loaded == nil {
		return nil
	}
	return s.loaded.Context()
}

// EntryID returns the entry id under which m was written or loaded, "" for
// a message this store never wrote.
func (s *Store) EntryID(m Message) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ids[m]
}

// Append writes m as one line, all or nothing: the line goes out in a single
// write on an O_APPEND descriptor, followed by an fsync, and when either
// fails (a full disk, an I/O error) the file is cut back to where the line
// began, so a later append never continues a fragment. A crash can at most
// leave a partial last line, which Load reports and Open steps past.
func (s *Store) Append(m Message) error {
	raw, err := MarshalMessage(m)
	if err != nil {
		return fmt.Errorf("session: %w", err)
	}
	id, err := s.appendEntry(func(base EntryBase) any {
		base.Type = entryMessage
		return messageEntry{EntryBase: base, Message: raw}
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	if s.ids == nil {
		s.ids = map[Message]string{}
	}
	s.ids[m] = id
	s.mu.Unlock()
	return nil
}

// appendEntry writes the entry that build makes of its id, parentId and
// timestamp as one line (see Append), and returns the id.
func (s *Store) appendEntry(build func(EntryBase) any) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return "", errors.New("session: store is closed")
	}
	// The change entries a new session waits with go first, in the same
	// write, each the parent of the next.
	var buf []byte
	lastID := s.lastID
	entry := func(build func(EntryBase) any) (string, error) {
		base := EntryBase{ID: NewEntryID(), Timestamp: entryTime()}
		if lastID != "" {
			parent := lastID
			base.ParentID = &parent
		}
		line, err := json.Marshal(build(base))
		if err != nil {
			return "", fmt.Errorf("session: %w", err)
		}
		if len(buf) > 0 {
			buf = append(buf, '\n')
		}
		buf = append(buf, line...)
		lastID = base.ID
		return base.ID, nil
	}
	if s.f == nil {
		for _, p := range s.pending {
			if _, err := entry(p); err != nil {
				return "", err
			}
		}
	}
	id, err := entry(build)
	if err != nil {
		return "", err
	}
	if s.f == nil {
		err = s.create(buf)
	} else {
		err = s.writeLine(buf)
	}
	if err != nil {
		return "", fmt.Errorf("session: append: %w", err)
	}
	s.pending = nil
	s.lastID = lastID
	return id, nil
}

func (s *Store) writeLine(line []byte) error {
	st, err := s.f.Stat()
	if err != nil {
		return err
	}
	start := st.Size()
	buf := make([]byte, 0, len(line)+2)
	if s.needNL {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	n, err := s.f.Write(buf)
	if err == nil {
		err = s.f.Sync()
	}
	if err == nil {
		s.needNL = false
		return nil
	}
	// A short write leaves a fragment, and after a failed fsync the line
	// may not be on disk: either way the caller hears "not saved", so the
	// file must not keep it. Only our own bytes are cut: if the file grew
	// past them, another agentsh appended to it meanwhile.
	if n > 0 {
		if now, serr := s.f.Stat(); serr != nil || now.Size() != start+int64(n) || s.f.Truncate(start) != nil {
			s.needNL = true // the fragment stays; the next line must not continue it
		}
	}
	return err
}

// Name is the session's name: the last title_change's title, "" if none.
func (s *Store) Name() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.name
}

// SetName appends a title_change entry naming the session (the file is
// created by it if nothing was written yet), all or nothing as Append.
func (s *Store) SetName(name string) error {
	s.mu.Lock()
	prev := s.name
	s.mu.Unlock()
	if _, err := s.appendEntry(func(base EntryBase) any {
		base.Type = entryTitle
		return titleEntry{EntryBase: base, Title: name, PreviousTitle: prev, Source: "user"}
	}); err != nil {
		return fmt.Errorf("session: set name: %w", err)
	}
	s.mu.Lock()
	s.name = name
	s.mu.Unlock()
	return nil
}

// SetParentSession records parent in the header of a session whose file
// is not written yet (it is ignored afterwards: the header is line 1).
func (s *Store) SetParentSession(parent string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		s.header.ParentSession = parent
	}
}

// Close closes the file; later Appends fail.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}

// ValidID reports whether id can be a session id: what NewID makes, or
// another agent's (a UUID), never text with control characters that a
// crafted file would have agentsh print to the terminal (the exit hint,
// the picker).
func ValidID(id string) bool {
	if id == "" || len(id) > 128 {
		return false
	}
	for _, c := range []byte(id) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// NewID returns a random 16-hex-digit session id.
func NewID() (string, error) {
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("session: random id: %w", err)
	}
	return hex.EncodeToString(b[:]), nil
}

// fileTimestamp is t in UTC RFC 3339 with milliseconds, ':' and '.' replaced
// by '-' so it is a portable file name that sorts by time.
func fileTimestamp(t time.Time) string {
	s := t.UTC().Format("2006-01-02T15:04:05.000Z")
	return strings.NewReplacer(":", "-", ".", "-").Replace(s)
}

// sessionFile is one <ts>_<id>.jsonl in a sessions folder.
type sessionFile struct {
	path, id string
	mod      time.Time
}

func listSessionFiles(dir string) ([]sessionFile, error) {
	des, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("session: %w", err)
	}
	var out []sessionFile
	for _, de := range des {
		name := de.Name()
		if !de.Type().IsRegular() || !strings.HasSuffix(name, sessionExt) {
			continue
		}
		i := strings.LastIndexByte(name, '_')
		if i < 0 || !ValidID(strings.TrimSuffix(name[i+1:], sessionExt)) {
			continue
		}
		fi, err := de.Info()
		if err != nil {
			continue // removed meanwhile
		}
		out = append(out, sessionFile{path: filepath.Join(dir, name),
			id: strings.TrimSuffix(name[i+1:], sessionExt), mod: fi.ModTime()})
	}
	return out, nil
}

// Newest returns the most recently written session file of cwd that holds
// at least one message, for --continue (ties go to the later file name,
// whose timestamp is newer). A file with a header alone (left by an older
// agentsh that wrote one on every start) is passed over.
func Newest(cwd string) (string, error) {
	files, err := listSessionFiles(SessionsDir(cwd))
	if err != nil {
		return "", err
	}
	sortNewestFirst(files)
	for _, f := range files {
		if hasMessage(f.path) {
			return f.path, nil
		}
	}
	return "", ErrNoSession
}

func sortNewestFirst(files []sessionFile) {
	sort.Slice(files, func(i, j int) bool {
		if !files[i].mod.Equal(files[j].mod) {
			return files[i].mod.After(files[j].mod)
		}
		return files[i].path > files[j].path
	})
}

// Find resolves --resume's argument: a path to an existing file (anything
// containing a separator or ending in .jsonl), or a session id of cwd, or an
// unambiguous prefix of one. An exact id match wins over prefix matches.
func Find(cwd, idOrPath string) (string, error) {
	arg := strings.TrimSpace(idOrPath)
	if arg == "" {
		return "", errors.New("session: empty session id")
	}
	if strings.ContainsRune(arg, os.PathSeparator) || strings.HasSuffix(arg, sessionExt) {
		p := arg
		if !filepath.IsAbs(p) {
			p = filepath.Join(cwd, p)
		}
		st, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("session: %w", err)
		}
		if !st.Mode().IsRegular() {
			return "", fmt.Errorf("session: %s is not a file", p)
		}
		return p, nil
	}
	files, err := listSessionFiles(SessionsDir(cwd))
	if err != nil {
		return "", err
	}
	var matches []sessionFile
	for _, f := range files {
		if f.id == arg {
			return f.path, nil
		}
		if strings.HasPrefix(f.id, arg) {
			matches = append(matches, f)
		}
	}
	switch len(matches) {
	case 0:
		return "", fmt.Errorf("session: no session %q in %s", arg, SessionsDir(cwd))
	case 1:
		return matches[0].path, nil
	}
	ids := make([]string, len(matches))
	for i, m := range matches {
		ids[i] = m.id
	}
	sort.Strings(ids)
	return "", fmt.Errorf("session: id prefix %q is ambiguous: %s", arg, strings.Join(ids, ", "))
}

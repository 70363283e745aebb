package tui

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/tools"
)

// mentionWalkLimit bounds the files one walk of a session's folder lists:
// a home folder or a monorepo costs at most this many entries, and the
// completion says so when it stopped there.
const mentionWalkLimit = 20000

// mentionRows is how many matches the completion list shows.
const mentionRows = 8

// mentionMaxAge is how long a folder's listing is reused before a new `@`
// walks the folder again (files come and go while the agent works).
const mentionMaxAge = 30 * time.Second

// mentionFilesMsg carries a finished walk of cwd back to Update.
type mentionFilesMsg struct {
	cwd       string
	files     []string
	truncated bool
	err       error
}

// fileList is one folder's listing, walked off the Update goroutine.
type fileList struct {
	files     []string
	lower     []string // files, lower-cased once for matching
	truncated bool
	loading   bool
	err       error
	at        time.Time
}

// mention is the `@` file completion under the editor's cursor: typing `@`
// at the start of a word opens a list of the session folder's files that
// match what follows fuzzily; tab or enter puts the chosen relative path in
// place of the `@word`, esc closes the list until the next `@`.
type mention struct {
	open      bool
	row, at   int    // editor line and rune index of the `@`
	query     string // what follows the `@` up to the cursor
	cwd       string
	matches   []string
	sel       int
	dismissed [2]int // row and index of the `@` esc closed; {-1,-1} for none
	cache     map[string]*fileList
}

func newMention() *mention {
	return &mention{dismissed: [2]int{-1, -1}, cache: map[string]*fileList{}}
}

// mentionToken finds an `@word` that ends at the editor's cursor: the word
// must start the line or follow a space, so an e-mail address is no mention.
func (e *editor) mentionToken() (row, at int, query string, ok bool) {
	line := e.lines[e.row][:e.col]
	i := len(line)
	for i > 0 && !unicode.IsSpace(line[i-1]) {
		i--
	}
	if i >= len(line) || line[i] != '@' {
		return 0, 0, "", false
	}
	return e.row, i, string(line[i+1:]), true
}

// replaceBack replaces the n runes before the cursor with s.
func (e *editor) replaceBack(n int, s string) {
	l := e.lines[e.row]
	e.lines[e.row] = append(l[:e.col-n:e.col-n], l[e.col:]...)
	e.col -= n
	e.InsertString(s)
}

// refresh follows the editor after an edit: it opens, narrows or closes the
// list, and returns the walk to run when cwd has no fresh listing. fsys is
// the session's file system: the walk sees what the model's tools see, so
// a folder the sandbox denies is not listed.
func (mn *mention) refresh(ctx context.Context, e *editor, cwd string, fsys tools.FS) tea.Cmd {
	row, at, query, ok := e.mentionToken()
	if !ok {
		mn.open = false
		mn.dismissed = [2]int{-1, -1}
		return nil
	}
	if mn.dismissed == [2]int{row, at} {
		return nil
	}
	fresh := !mn.open || mn.row != row || mn.at != at || mn.cwd != cwd
	mn.open, mn.row, mn.at, mn.query, mn.cwd = true, row, at, query, cwd
	var cmd tea.Cmd
	fl := mn.cache[cwd]
	if fl == nil || (fresh && !fl.loading && time.Since(fl.at) > mentionMaxAge) {
		if fl == nil {
			fl = &fileList{}
			mn.cache[cwd] = fl
		}
		fl.loading = true
		cmd = func() tea.Msg {
			files, truncated, err := tools.ListFiles(ctx, fsys, cwd, mentionWalkLimit)
			return mentionFilesMsg{cwd: cwd, files: files, truncated: truncated, err: err}
		}
	}
	mn.rank()
	if fresh {
		mn.sel = 0
	}
	return cmd
}

// follow closes the list when the editor changed under it without a key
// of its own (a send, ctrl+c, a recalled prompt): its `@word` is gone.
func (mn *mention) follow(e *editor) {
	if !mn.open {
		return
	}
	if row, at, _, ok := e.mentionToken(); !ok || row != mn.row || at != mn.at {
		mn.open = false
	}
}

// loaded stores a finished walk.
func (mn *mention) loaded(msg mentionFilesMsg) {
	fl := mn.cache[msg.cwd]
	if fl == nil {
		fl = &fileList{}
		mn.cache[msg.cwd] = fl
	}
	fl.loading, fl.err, fl.at = false, msg.err, time.Now()
	if msg.err == nil || len(msg.files) > 0 {
		fl.files, fl.truncated = msg.files, msg.truncated
		fl.lower = make([]string, len(msg.files))
		for i, f := range msg.files {
			fl.lower[i] = strings.ToLower(f)
		}
	}
	if mn.open && mn.cwd == msg.cwd {
		mn.rank()
	}
}

func (mn *mention) rank() {
	mn.matches = nil
	if fl := mn.cache[mn.cwd]; fl != nil {
		mn.matches = fuzzyRank(mn.query, fl.files, fl.lower, mentionRows)
	}
	mn.sel = min(mn.sel, max(len(mn.matches)-1, 0))
}

// close is esc: the list stays closed while the cursor is in this `@word`.
func (mn *mention) close() {
	mn.open = false
	mn.dismissed = [2]int{mn.row, mn.at}
}

// move changes the selection by d, wrapping around.
func (mn *mention) move(d int) {
	if n := len(mn.matches); n > 0 {
		mn.sel = ((mn.sel+d)%n + n) % n
	}
}

// accept puts the selected path in place of the `@word`; it reports false
// when there is nothing to insert.
func (mn *mention) accept(e *editor) bool {
	if !mn.open || len(mn.matches) == 0 {
		return false
	}
	row, at, query, ok := e.mentionToken()
	if !ok || row != mn.row || at != mn.at {
		return false
	}
	e.replaceBack(len([]rune(query))+1, mn.matches[mn.sel]+" ")
	mn.open = false
	return true
}

// fuzzyMatch reports whether query's runes appear in s in order, and the
// narrowest window that holds them: its width (in bytes) and where it
// starts.
func fuzzyMatch(query, s string) (span, start int, ok bool) {
	if query == "" {
		return 0, 0, true
	}
	if !isASCII(query) {
		// Rare: match rune by rune (a byte of a multi-byte rune could
		// otherwise match a piece of another).
		return fuzzyMatchRunes([]rune(query), []rune(s))
	}
	// ASCII query bytes never occur inside a multi-byte rune, so bytes do.
	best := -1
	for i := 0; i < len(s); {
		// The first window from i: forward greedy to its end e, then back
		// from e to the latest start b that still matches.
		j := strings.IndexByte(s[i:], query[0])
		if j < 0 {
			break
		}
		i += j
		e, k := i, 0
		for ; e < len(s) && k < len(query); e++ {
			if s[e] == query[k] {
				k++
			}
		}
		if k < len(query) {
			break // no later start can match either
		}
		b, k := e-1, len(query)-1
		for ; k >= 0; b-- {
			if s[b] == query[k] {
				k--
			}
		}
		b++
		if w := e - b; best < 0 || w < best {
			best, start = w, b
		}
		i = b + 1
	}
	return best, start, best >= 0
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func fuzzyMatchRunes(q, rs []rune) (span, start int, ok bool) {
	best := -1
	for i, r := range rs {
		if r != q[0] {
			continue
		}
		j, k := i+1, 1
		for ; j < len(rs) && k < len(q); j++ {
			if rs[j] == q[k] {
				k++
			}
		}
		if k < len(q) {
			break
		}
		if w := j - i; best < 0 || w < best {
			best, start = w, i
		}
	}
	return best, start, best >= 0
}

// fuzzyRank returns at most n of files whose lower-cased form holds
// query's letters in order (case is ignored): the narrowest match first,
// then the earliest, then the shortest path, then by name. It keeps only
// the n best while it goes, so a keystroke over a full listing stays cheap.
func fuzzyRank(query string, files, lower []string, n int) []string {
	type hit struct {
		span, start int
		path        string
	}
	less := func(a, b hit) int {
		return cmp.Or(cmp.Compare(a.span, b.span), cmp.Compare(a.start, b.start),
			cmp.Compare(len(a.path), len(b.path)), strings.Compare(a.path, b.path))
	}
	if n <= 0 {
		return nil
	}
	q := strings.ToLower(query)
	top := make([]hit, 0, n+1)
	for i, l := range lower {
		span, start, ok := fuzzyMatch(q, l)
		if !ok {
			continue
		}
		h := hit{span, start, files[i]}
		if len(top) == n && less(h, top[n-1]) >= 0 {
			continue
		}
		at, _ := slices.BinarySearchFunc(top, h, less)
		top = slices.Insert(top, at, h)
		if len(top) > n {
			top = top[:n]
		}
	}
	out := make([]string, len(top))
	for i, h := range top {
		out[i] = h.path
	}
	return out
}

// view is the list's rows, at most width cells wide, the selected one
// highlighted; none when it is closed.
func (mn *mention) view(width int, st *styles) []string {
	if !mn.open {
		return nil
	}
	fl := mn.cache[mn.cwd]
	var rows []string
	for i, p := range mn.matches {
		row := ansi.Truncate(" "+p+" ", width, "…")
		if i == mn.sel {
			rows = append(rows, st.selected.Render(row))
		} else {
			rows = append(rows, row)
		}
	}
	var note string
	switch {
	case fl == nil || (fl.loading && len(fl.files) == 0):
		note = "listing files…"
	case fl.err != nil && len(fl.files) == 0:
		note = "cannot list files: " + fl.err.Error()
	case len(mn.matches) == 0:
		note = "no file matches @" + mn.query
	default:
		ak, ck := keys.Mention.Accept, keys.Mention.Close
		note = helpLine(help(ak), help(ck))
		if fl.truncated {
			note = "first " + strconv.Itoa(mentionWalkLimit) + " files only · " + note
		}
	}
	return append(rows, st.dim.Render(ansi.Truncate(" "+note, width, "…")))
}

// mentionKey handles a key while the list is open; false passes it on to
// the editor (and the list follows the edit).
func (m *model) mentionKey(k keyName) bool {
	mk := keys.Mention
	switch {
	case is(k, mk.Accept):
		return m.mention.accept(m.editor)
	case is(k, mk.Close):
		m.mention.close()
		return true
	case is(k, mk.Up):
		m.mention.move(-1)
		return true
	case is(k, mk.Down):
		m.mention.move(1)
		return true
	}
	return false
}

// withMention draws the open list over the transcript's last rows, right
// above the editor.
func (m *model) withMention(transcript string) string {
	rows := m.mention.view(m.width, m.st)
	if len(rows) == 0 {
		return transcript
	}
	lines := strings.Split(transcript, "\n")
	rows = rows[max(len(rows)-len(lines), 0):]
	copy(lines[len(lines)-len(rows):], rows)
	return strings.Join(lines, "\n")
}

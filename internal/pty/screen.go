package pty

import (
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	uv "github.com/charmbracelet/ultraviolet"
	"github.com/charmbracelet/x/ansi"
	"github.com/charmbracelet/x/ansi/parser"
	"github.com/charmbracelet/x/vt"
)

// skipMinBytes is the smallest batch Feed tries to skip ahead in. Below it
// the emulator keeps up on its own; tests lower it to exercise skipping on
// small inputs.
var skipMinBytes = 64 << 10

// screenWriteHook, when set by a test, runs inside Feed's panic guard just
// before each write to the emulator, so recovery can be tested without an
// input that really crashes x/vt.
var screenWriteHook func(p []byte)

const (
	// screenScrollback: x/vt v0.1.0 keeps 10,000 lines by default and, once
	// full, drops the oldest with slices.Delete, a memmove of the whole
	// history on every scrolled line. Nothing reads it (the overlay shows the
	// viewport, and skip-ahead would leave holes in it anyway).
	screenScrollback = 1

	// A child can set a megabyte title; the TUI only ever shows a line.
	maxTitleBytes = 1024

	// Replies that the PTY does not take are dropped beyond this, so a child
	// that floods queries without reading answers cannot grow memory.
	maxQueuedReplies = 1 << 20

	// Feed releases the lock between writes of about this much work, so the
	// overlay can read the screen while a big batch is parsed. A scrolled
	// line costs a memmove of the whole screen, hence the line budget.
	feedChunkBytes = 4 << 10
	feedChunkLines = 16
)

// Screen is the virtual terminal of one PTY session: child output goes in
// through Feed, the TUI reads the screen from another goroutine.
type Screen struct {
	// feedMu serialises Feed: a skip plan is made outside mu and is only
	// valid if nothing else writes to the emulator before it is applied.
	feedMu sync.Mutex

	mu     sync.Mutex
	e      *vt.Emulator
	cols   int
	rows   int
	closed bool
	// gen changes whenever geometry or the emulator itself changes, which
	// invalidates a skip plan made from an earlier snapshot.
	gen    uint64
	resets int

	// shadow runs x/ansi's transition table (the one inside x/vt) over every
	// byte the emulator gets, because x/vt does not say whether its parser
	// is between sequences, and skipping is only sound if it is.
	shadow ansi.Parser
	prevCR bool // the last byte fed was a CR executed in the ground state

	// Mirrors of emulator state that x/vt keeps unexported, kept by
	// callbacks and handlers that run inside e.Write (so under mu).
	title      string
	appCursor  bool
	originMode bool
	lrMode     bool
	top, bot   int  // main screen's vertical scroll region, rows [top, bot)
	hMargins   bool // main screen has DECSLRM margins narrower than the screen
	// lastAlt is the alternate screen as it was when the child left it
	// (vim's last frame): what a full-screen program "printed".
	lastAlt string
	usedAlt bool

	skipMin int
	skipped atomic.Int64
	changed chan struct{}

	replies *replyQueue
	drains  sync.WaitGroup
}

// NewScreen returns a cols×rows screen (clamped to spec §3's bounds) whose
// answers to the child's queries (DA1/DA2, CPR, DECRQM, OSC colours) go to
// replies, meant to be written to the PTY. replies may be nil.
func NewScreen(cols, rows int, replies io.Writer) *Screen {
	cols, rows = ClampSize(cols, rows)
	s := &Screen{
		cols:    cols,
		rows:    rows,
		bot:     rows,
		skipMin: skipMinBytes,
		changed: make(chan struct{}, 1),
		replies: newReplyQueue(replies),
	}
	s.shadow.SetParamsSize(1)
	s.shadow.SetDataSize(1)
	s.mu.Lock()
	s.e = s.startEmulatorLocked()
	s.mu.Unlock()
	return s
}

// startEmulatorLocked builds an emulator wired to s and starts draining its
// replies, since x/vt answers queries into a synchronous pipe and blocks
// inside Write until someone reads it.
func (s *Screen) startEmulatorLocked() *vt.Emulator {
	e := vt.NewEmulator(s.cols, s.rows)
	e.SetScrollbackSize(screenScrollback)
	s.track(e)
	guardEmulator(e)
	s.drains.Add(1)
	go s.drain(e)
	return e
}

func (s *Screen) drain(e *vt.Emulator) {
	defer s.drains.Done()
	buf := make([]byte, 1024)
	for {
		n, err := e.Read(buf)
		if n > 0 {
			s.replies.push(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// closeEmulatorReplies ends e's reply drain. Emulator.Close would do it too,
// but it writes a flag that Read checks without synchronisation, which the
// race detector reports; closing the pipe is enough to make Read return.
func closeEmulatorReplies(e *vt.Emulator) {
	if pw, ok := e.InputPipe().(*io.PipeWriter); ok {
		_ = pw.CloseWithError(io.EOF)
	}
}

// track mirrors the emulator state that x/vt v0.1.0 does not export and that
// Screen needs: the title, DECCKM for key encoding, and what decides whether
// skipping is sound (origin mode, scroll margins).
func (s *Screen) track(e *vt.Emulator) {
	e.SetCallbacks(vt.Callbacks{
		Title:       func(t string) { s.title = clipTitle(t) },
		EnableMode:  func(m ansi.Mode) { s.trackMode(m, true) },
		DisableMode: func(m ansi.Mode) { s.trackMode(m, false) },
	})
	// These run before x/vt's own handlers (the last registered runs first)
	// and return false so that x/vt's still run; they repeat x/vt's
	// validation so the mirror changes exactly when the real margins do.
	e.RegisterCsiHandler('r', func(params ansi.Params) bool { // DECSTBM
		if !e.IsAltScreen() {
			h := e.Height()
			top, _, _ := params.Param(0, 1)
			bot, _, _ := params.Param(1, h)
			top = max(top, 1)
			if bot < 1 || bot > h {
				bot = h // guardEmulator clamps the real one the same way
			}
			if top < bot {
				s.top, s.bot = top-1, bot
			}
		}
		return false
	})
	e.RegisterCsiHandler('s', func(params ansi.Params) bool { // DECSLRM when ?69 is set
		if s.lrMode && !e.IsAltScreen() {
			w := e.Width()
			left, _, _ := params.Param(0, 1)
			right, _, _ := params.Param(1, w)
			left = max(left, 1)
			if right < 1 || right > w {
				right = w
			}
			if left < right {
				s.hMargins = left != 1 || right != w
			}
		}
		return false
	})
	e.RegisterCsiHandler(ansi.Command('?', 0, 'l'), func(params ansi.Params) bool { // leaving the alternate screen
		if e.IsAltScreen() {
			for i := range params {
				if p, _, _ := params.Param(i, 0); p == 47 || p == 1047 || p == 1049 {
					s.lastAlt = e.String()
					break
				}
			}
		}
		return false
	})
	e.RegisterCsiHandler(ansi.Command('?', 0, 'h'), func(params ansi.Params) bool { // entering it
		for i := range params {
			if p, _, _ := params.Param(i, 0); p == 47 || p == 1047 || p == 1049 {
				s.usedAlt = true
				break
			}
		}
		return false
	})
	e.RegisterEscHandler('c', func() bool { // RIS resets both screens' margins
		s.top, s.bot, s.hMargins = 0, e.Height(), false
		return false
	})
}

func (s *Screen) trackMode(m ansi.Mode, on bool) {
	switch m {
	case ansi.ModeCursorKeys:
		s.appCursor = on
	case ansi.ModeOrigin:
		s.originMode = on
	case ansi.ModeLeftRightMargin:
		s.lrMode = on
	}
}

func clipTitle(t string) string {
	if len(t) <= maxTitleBytes {
		return t
	}
	i := maxTitleBytes
	for i > 0 && !utf8.RuneStart(t[i]) {
		i--
	}
	return t[:i]
}

// guardEmulator bounds what one sequence can cost or break in x/vt v0.1.0.
// Each handler rewrites the parser's parameters in place (x/vt hands every
// handler of a sequence the same slice) and returns false so x/vt's own
// handler then runs with the safe values:
//   - ECH fills n cells one at a time, also past the right edge, and CHT/CBT
//     spin n times at the last tab stop: `CSI 2147483646 X` takes seconds.
//     More than the width changes nothing, so clamping is exact.
//   - REP prints n characters: `CSI 2147483646 b` would take half an hour.
//     Once the screen is saturated with the character (at most (rows+2)·cols
//     prints), the screen and cursor repeat with period cols, so reducing n
//     modulo cols past that bound gives the same screen.
//   - DECSTBM/DECSLRM accept a bottom/right margin past the screen edge and
//     the next scroll indexes out of range (a panic). Real terminals clamp.
func guardEmulator(e *vt.Emulator) {
	clamp := func(params ansi.Params, i, hi int) {
		if i < len(params) && params[i].Param(0) > hi {
			params[i] = ansi.Param(ansi.Parameter(hi, params[i].HasMore()))
		}
	}
	perWidth := func(params ansi.Params) bool {
		clamp(params, 0, e.Width())
		return false
	}
	e.RegisterCsiHandler('X', perWidth)                       // ECH
	e.RegisterCsiHandler('I', perWidth)                       // CHT
	e.RegisterCsiHandler('Z', perWidth)                       // CBT
	e.RegisterCsiHandler('b', func(params ansi.Params) bool { // REP
		w := e.Width()
		limit := w * (e.Height() + 2)
		if len(params) > 0 {
			if n := params[0].Param(1); n > limit {
				params[0] = ansi.Param(ansi.Parameter(limit+(n-limit)%w, params[0].HasMore()))
			}
		}
		return false
	})
	e.RegisterCsiHandler('r', func(params ansi.Params) bool { // DECSTBM
		clamp(params, 1, e.Height())
		return false
	})
	e.RegisterCsiHandler('s', func(params ansi.Params) bool { // DECSLRM
		clamp(params, 1, e.Width())
		return false
	})
}

// Feed consumes a batch of child output. It never blocks on replies and
// never panics. When the batch is large and mostly scrolls off, it feeds
// only what decides the final screen (see planSkip).
func (s *Screen) Feed(p []byte) {
	s.feedMu.Lock()
	defer s.feedMu.Unlock()
	for len(p) > 0 {
		next := len(p) // feed this much before planning again
		if len(p) >= s.skipMin {
			switch st, when := s.skipStart(); when {
			case skipNow:
				plan := planSkip(p, st)
				if plan.k > 0 && s.applySkip(plan, st.gen) {
					p = p[plan.k:]
					plan.end -= plan.k
				}
				// Plan again past the barrier that ended the prefix: it may
				// be the last one before a long flood.
				next = plan.end + 1
			case skipAfterBarrier:
				next = recheckAt(p) + 1
			case skipAfterSequence:
				next = 1
			}
		}
		n, ok := s.feedUpTo(p, next)
		if !ok {
			return
		}
		p = p[n:]
	}
}

// When skipping may become possible, as seen by skipStart.
const (
	skipNever         = iota // not in this batch (alternate screen, closed)
	skipNow                  // plan from here
	skipAfterBarrier         // after an item that can move the cursor or change margins or modes
	skipAfterSequence        // once the parser is back in the ground state
)

// skipStart snapshots the state planSkip's proof depends on and says when
// a plan may be made.
func (s *Screen) skipStart() (st skipState, when int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.closed || s.e.IsAltScreen():
		// Full-screen programs redraw rather than scroll; rechecking at
		// each of their cursor moves would cost more than it could save.
		return st, skipNever
	case s.shadow.State() != parser.GroundState:
		return st, skipAfterSequence
	}
	full := s.top == 0 && s.bot == s.rows
	pos := s.e.CursorPosition()
	if s.hMargins || (!full && s.originMode) ||
		pos.X < 0 || pos.X >= s.cols || pos.Y < s.top || pos.Y >= s.bot {
		return st, skipAfterBarrier
	}
	return skipState{rows: s.rows, top: s.top, bot: s.bot, y0: pos.Y, grid: full, prevCR: s.prevCR, gen: s.gen}, skipNow
}

// recheckAt returns the offset of the first item in p that could make
// skipStart's answer change.
func recheckAt(p []byte) int {
	for i := 0; i < len(p); {
		kind, n := scanItem(p, i)
		switch kind {
		case itBarrier, itIncomplete, itGrid:
			return i
		}
		i += n
	}
	return len(p)
}

func (s *Screen) applySkip(plan skipPlan, gen uint64) bool {
	s.mu.Lock()
	if s.closed || s.gen != gen {
		s.mu.Unlock()
		return false
	}
	for b := plan.replay; len(b) > 0; {
		n, _ := s.cutLocked(b, len(b)+1)
		s.writeLocked(b[:n])
		b = b[n:]
	}
	s.skipped.Add(int64(plan.k - plan.kept))
	s.mu.Unlock()
	s.notify()
	return true
}

// feedUpTo writes p to the emulator in pieces, releasing the lock between
// them, and returns once at least want bytes are written and the parser
// rests where a new plan may start (or p is used up). ok is false if the
// screen was closed meanwhile.
func (s *Screen) feedUpTo(p []byte, want int) (n int, ok bool) {
	for n < len(p) {
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			return n, false
		}
		m, rest := s.cutLocked(p[n:], want-n)
		s.writeLocked(p[n : n+m])
		s.mu.Unlock()
		s.notify()
		n += m
		if rest {
			break
		}
	}
	return n, true
}

// cutLocked advances the shadow parser over the longest piece of b that
// should go to the emulator in one Write and returns its length; rest
// reports that the piece ends at a resting point at or after want.
//
// A Write boundary is invisible to x/vt only where its grapheme buffer is
// empty anyway, because Write flushes that buffer when it returns: after a
// control or a complete sequence in the ground state (their handlers flush
// too), or between two printable ASCII characters (x/vt emits an ASCII
// character as soon as the next one arrives). Anywhere else a cut could
// split "e" from a combining accent that follows.
func (s *Screen) cutLocked(b []byte, want int) (n int, rest bool) {
	lines := 0
	for i, c := range b {
		act := s.shadow.Advance(c)
		ground := s.shadow.State() == parser.GroundState
		s.prevCR = ground && c == '\r' && act == parser.ExecuteAction
		resting := ground && (act == parser.ExecuteAction || act == parser.DispatchAction)
		if resting && i+1 >= want {
			return i + 1, true
		}
		if resting && c >= '\n' && c <= '\f' {
			lines++
		}
		if i+1 >= feedChunkBytes || lines >= feedChunkLines {
			if resting || (ground && act == parser.PrintAction && isPrintableASCII(c) &&
				i+1 < len(b) && isPrintableASCII(b[i+1])) {
				return i + 1, false
			}
		}
	}
	return len(b), false
}

func isPrintableASCII(c byte) bool { return c >= 0x20 && c < 0x7f }

// writeLocked hands b to the emulator. x/vt is fed untrusted bytes, so a
// panic in it costs the screen's contents, not the session: the emulator is
// replaced by a blank one of the same size and the rest of b is dropped.
func (s *Screen) writeLocked(b []byte) {
	defer func() {
		if r := recover(); r != nil {
			s.replaceLocked()
		}
	}()
	if screenWriteHook != nil {
		screenWriteHook(b)
	}
	_, _ = s.e.Write(b)
}

func (s *Screen) replaceLocked() {
	closeEmulatorReplies(s.e)
	s.resets++
	s.gen++
	s.shadow.Reset()
	s.prevCR = false
	s.appCursor, s.originMode, s.lrMode = false, false, false
	s.top, s.bot, s.hMargins = 0, s.rows, false
	s.e = s.startEmulatorLocked()
}

func (s *Screen) notify() {
	select {
	case s.changed <- struct{}{}:
	default:
	}
}

// Resize changes the screen size, clamped to spec §3's bounds.
func (s *Screen) Resize(cols, rows int) {
	cols, rows = ClampSize(cols, rows)
	s.mu.Lock()
	if s.closed || (cols == s.cols && rows == s.rows) {
		s.mu.Unlock()
		return
	}
	s.cols, s.rows = cols, rows
	s.gen++
	s.prevCR = false
	s.top, s.bot, s.hMargins = 0, rows, false // x/vt resets margins on resize
	func() {
		defer func() {
			if r := recover(); r != nil {
				s.replaceLocked()
			}
		}()
		s.e.Resize(cols, rows)
	}()
	s.mu.Unlock()
	s.notify()
}

// Changed is signalled (capacity 1, never blocking the sender) after Feed or
// Resize changed the screen, so the TUI can coalesce redraws.
func (s *Screen) Changed() <-chan struct{} { return s.changed }

// Text returns the rows as plain text the way `tmux capture-pane -p` shows
// them: trailing spaces trimmed, a wide character once.
func (s *Screen) Text() []string {
	s.mu.Lock()
	str, rows := s.e.String(), s.rows
	s.mu.Unlock()
	lines := strings.Split(str, "\n")
	for len(lines) < rows {
		lines = append(lines, "")
	}
	return lines[:rows]
}

// Render returns the rows with SGR styling and hyperlinks, joined by "\n".
func (s *Screen) Render() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.e.Render()
}

// Draw paints the screen into area of scr.
func (s *Screen) Draw(scr uv.Screen, area uv.Rectangle) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.e.Draw(scr, area)
}

// CellAt returns a copy of the cell at x, y, or the zero Cell outside the screen.
func (s *Screen) CellAt(x, y int) uv.Cell {
	s.mu.Lock()
	defer s.mu.Unlock()
	if c := s.e.CellAt(x, y); c != nil {
		return *c
	}
	return uv.Cell{}
}

// Cursor returns the cursor position (0-based) and whether the child shows it.
func (s *Screen) Cursor() (x, y int, visible bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	pos := s.e.CursorPosition()
	return pos.X, pos.Y, !s.e.CursorHidden()
}

// AltScreen reports whether the child is on the alternate screen.
func (s *Screen) AltScreen() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.e.IsAltScreen()
}

// FullScreenText is, for a child that used the alternate screen (vim,
// less, htop), that screen's last frame as plain text rows, trailing
// spaces and blank rows at the end trimmed: the screen it is on now, or
// the one it left last. ok is false when the child never used it.
func (s *Screen) FullScreenText() (text string, ok bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.usedAlt {
		return "", false
	}
	raw := s.lastAlt
	if s.e.IsAltScreen() {
		raw = s.e.String()
	}
	lines := strings.Split(raw, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n"), true
}

// AppCursor reports DECCKM (?1), which decides how arrow keys are encoded.
func (s *Screen) AppCursor() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.appCursor
}

// Title returns the window title last set by OSC 0 or 2.
func (s *Screen) Title() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.title
}

// Size returns the screen size after clamping.
func (s *Screen) Size() (cols, rows int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cols, s.rows
}

// SkippedBytes reports how many bytes skip-ahead kept from the emulator.
func (s *Screen) SkippedBytes() int64 { return s.skipped.Load() }

// Close stops the reply drain; later Feeds are ignored. It is idempotent.
// A replies writer that is blocked in Write is abandoned, not waited for.
func (s *Screen) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	closeEmulatorReplies(s.e)
	s.mu.Unlock()
	s.drains.Wait()
	s.replies.close()
}

// replyQueue decouples the emulator's reply pipe from the PTY writer, so a
// PTY that does not take input cannot stall Feed (x/vt writes replies
// synchronously from inside Write).
type replyQueue struct {
	w    io.Writer
	mu   sync.Mutex
	buf  []byte
	wake chan struct{}
	quit chan struct{}
	once sync.Once
}

func newReplyQueue(w io.Writer) *replyQueue {
	q := &replyQueue{w: w, wake: make(chan struct{}, 1), quit: make(chan struct{})}
	if w != nil {
		go q.run()
	}
	return q
}

func (q *replyQueue) push(b []byte) {
	if q.w == nil {
		return
	}
	q.mu.Lock()
	if len(q.buf)+len(b) <= maxQueuedReplies {
		q.buf = append(q.buf, b...)
	}
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *replyQueue) run() {
	for {
		select {
		case <-q.quit:
			return
		case <-q.wake:
		}
		for {
			q.mu.Lock()
			b := q.buf
			q.buf = nil
			q.mu.Unlock()
			if len(b) == 0 {
				break
			}
			_, _ = q.w.Write(b)
		}
	}
}

func (q *replyQueue) close() { q.once.Do(func() { close(q.quit) }) }

// Skip-ahead.
//
// x/vt moves every cell of the screen for each scrolled line, so a flood
// like `seq 1 1000000` would keep the overlay seconds behind the program.
// The sink already has every byte, so the emulator only has to end up with
// the same screen as if it had seen them all. planSkip finds a prefix of a
// batch whose effect on the final screen is nil apart from a few state
// changes, and replaces it by those state changes plus a cursor move.
//
// The batch is walked item by item (a run of printable ASCII, one UTF-8
// character as x/vt's parser collects it, a control, a sequence). Items fall
// in four classes:
//
//   - line-local: printing, CR, BS, HT, BEL, the controls x/vt ignores, and
//     EL, ECH, CHA, HPA, HPR, CUF, CUB, ICH, DCH, CHT, CBT. They touch only
//     the cursor row, move the cursor only along it (or wrap to the next row,
//     like a LF), and change no other state except REP's "last character"
//     and a pending single shift, both of which the replay restores.
//   - state-only: SGR, OSC strings, the DEC modes in safeDECModes, DECSCUSR,
//     DA1/DA2, keypad modes, charset designation and shifts, and any CSI
//     with a < = > prefix or ?u (kitty keyboard, XTMODKEYS: no-ops in x/vt
//     v0.1.0). Replayed in order; only SGRs since the last full reset are
//     kept, as a reset discards the pen before it.
//   - grid: bare LF, VT, FF, IND, RI, CUU, CUD, CNL, CPL, CUP, HVP, VPA, VPR,
//     ED, IL, DL, SU, SD. They move the cursor or change cells and nothing
//     else. They may precede the skip point, but only when the scroll region
//     is the whole screen (so the cursor cannot leave it), and the count of
//     lines starts again after each.
//   - barrier: everything else, including any form the scanner does not
//     fully recognise (C0 inside CSI, repeated prefixes, DCS, C1 controls)
//     and a sequence cut by the end of the batch. The scan stops there; Feed
//     feeds up to the end of the barrier and plans again.
//
// Soundness. Let the scan start in the ground state, on the main screen,
// with the cursor at row y inside the scroll region [top, bot) (full width,
// and origin mode off unless the region is the whole screen). Take a run of
// the accepted prefix that starts at p's start or right after a grid item
// and holds no grid item, and let e_1 < … < e_a be the offsets just after
// each of its CRLFs. By e_j the cursor has made at least j index steps (LF
// or autowrap) and nothing moved it up, so it is on the region's bottom row
// once j ≥ need = bot−1−y (bot−1−top after a grid item, which can leave it
// anywhere). Pick k = e_(a−rows) if a−rows ≥ max(need, 1): there the real
// cursor is at column 0 of row bot−1, the parser is in the ground state,
// nothing is pending. The replay puts the emulator in that same state: the
// state-only items of p[:k] in order, CUP to (bot, 1), and if p[:k] printed
// anything, a print of its last single-ASCII cluster (or of a character
// that REP ignores) and a CR. Only cell contents differ now, and only inside
// the region. The rows lines after k are line-local or state-only and act
// identically on both; each ends with an index step that scrolls the region
// in both, so after them every row the region had at k has scrolled out.
// From there the two emulators are equal in everything but scrollback,
// whatever follows. The last run that allows a k gives the skip point.
//
// This keeps rows lines after k rather than 2·rows+1, which would also cover
// a cursor whose row is unknown: the row is known, from the cursor at the
// start of the batch or the count of lines since a grid item. Per skip, the
// emulator scrolls rows times, which at 200×50 is most of Feed's cost.
//
// Accepted edge cases:
//   - Scrollback and damage tracking (Touched) differ; Screen uses neither.
//   - Bells and cursor-position callbacks of the skipped part do not fire.
//     Replies do: DA1/DA2 and OSC colour queries are replayed, in order, and
//     CPR and DECRQM, whose answers depend on skipped state, are barriers.
//   - No skipping on the alternate screen until the next batch. With DECSLRM
//     margins, with the cursor outside a DECSTBM region (e.g. left below
//     it), or with origin mode in a partial region, none until a barrier or
//     grid item has changed that.
//   - Classes mirror x/vt v0.1.0's handlers; the differential fuzz test
//     FuzzScreenFeed is what notices if an upgrade gives a no-op a meaning.

type skipState struct {
	rows     int    // screen height
	top, bot int    // scroll region rows [top, bot)
	y0       int    // cursor row at the start of p
	grid     bool   // the region is the whole screen, so grid items are allowed
	prevCR   bool   // the byte before p was an executed CR
	gen      uint64 // Screen.gen the snapshot was taken at
}

type skipPlan struct {
	k      int    // p[:k] is replaced by replay (0: no skip)
	end    int    // length of the accepted prefix
	replay []byte // what the emulator gets instead of p[:k]
	kept   int    // bytes of p[:k] that replay re-sends
}

type itemKind uint8

const (
	itBarrier    itemKind = iota
	itIncomplete          // cut by the end of p
	itASCII               // a run of printable ASCII
	itRune                // a UTF-8 lead byte and the bytes x/vt's parser takes after it
	itIgnored             // bytes the parser drops without any action
	itCR
	itLF
	itLocal    // line-local or a no-op
	itGrid     // cursor or cells only
	itState    // state-only, replayed
	itOSCOpen  // an OSC ended by the ESC that starts the next item
	itSGR      // SGR
	itSGRReset // SGR that starts with a full reset
)

// planSkip finds where p can be skipped to. See the comment above.
func planSkip(p []byte, st skipState) skipPlan {
	var plan skipPlan
	m := st.rows + 1
	ring := make([]int, m) // the last m line ends of the current run
	a := 0                 // line ends since the start or the last grid item
	need := st.bot - 1 - st.y0
	// settle ends a run: its best skip point leaves rows lines after it.
	settle := func() {
		if a >= st.rows+max(need, 1) {
			plan.k = ring[a%m]
		}
	}
	cr := st.prevCR
	i := 0
scan:
	for i < len(p) {
		kind, n := scanItem(p, i)
		switch kind {
		case itBarrier, itIncomplete:
			break scan
		case itLF:
			if cr {
				ring[a%m] = i + 1
				a++
				break
			}
			fallthrough // a bare LF moves down without returning
		case itGrid:
			if !st.grid {
				break scan
			}
			settle()
			a, need = 0, st.bot-1-st.top
		}
		cr = kind == itCR
		i += n
	}
	settle()
	plan.end = i
	if plan.k > 0 {
		plan.replay, plan.kept = replayFor(p[:plan.k], st.bot)
	}
	return plan
}

// replayFor builds what puts the emulator into the state p (which ends with
// a CRLF and holds no barrier) leaves behind, apart from cell contents: see
// the comment above planSkip.
func replayFor(p []byte, bot int) (replay []byte, kept int) {
	var state, sgr []byte
	last, pending := -1, -1 // REP's last character; an ASCII one awaiting its cluster's end
	printed := false
	for i := 0; i < len(p); {
		kind, n := scanItem(p, i)
		item := p[i : i+n]
		i += n
		switch kind {
		case itASCII:
			printed = true
			// x/vt emits an ASCII character alone as soon as the next one
			// arrives; only the run's last one may still join what follows.
			if pending >= 0 {
				last = pending
			}
			if n >= 2 {
				last = int(item[n-2])
			}
			pending = int(item[n-1])
			continue
		case itRune:
			printed = true
			if pending >= 0 {
				r, _ := utf8.DecodeRune(item)
				if asciiAlone(byte(pending), r) {
					last = pending
				}
				pending = -1
			}
			continue
		case itIgnored:
			continue
		}
		// Every other item makes x/vt flush its grapheme buffer.
		if pending >= 0 {
			last, pending = pending, -1
		}
		switch kind {
		case itState:
			state = append(state, item...)
			kept += n
		case itOSCOpen:
			state = append(state, item...)
			state = append(state, '\a')
			kept += n
		case itSGR:
			sgr = append(sgr, item...)
		case itSGRReset:
			sgr = append(sgr[:0], item...)
		}
	}
	kept += len(sgr)
	replay = append(state, sgr...)
	replay = append(replay, "\x1b["...)
	replay = strconv.AppendInt(replay, int64(bot), 10)
	replay = append(replay, ";1H"...)
	if printed {
		// The print sets REP's last character (a multi-byte one leaves it
		// alone, like x/vt) and uses up a pending SS2/SS3, as p[:k] did; the
		// cell scrolls out with the rest.
		if last >= 0 {
			replay = append(replay, byte(last))
		} else {
			replay = append(replay, "\u00a0"...)
		}
		replay = append(replay, '\r')
	}
	return replay, kept
}

// asciiAlone reports whether x/vt prints ASCII c as a cluster of its own when
// rune r is printed right after it (no combining mark, ZWJ or spacing mark).
func asciiAlone(c byte, r rune) bool {
	cluster, _ := ansi.FirstGraphemeCluster(utf8.AppendRune([]byte{c}, r), ansi.GraphemeWidth)
	return len(cluster) == 1
}

// scanItem classifies the item at p[i] and returns its length. It follows
// x/ansi's transition table (the parser inside x/vt), but accepts only the
// strict forms on which its reading cannot differ from the parser's;
// ansi.DecodeSequence is not used because it parses differently (it cancels
// an OSC at an ESC the parser dispatches it at, and validates UTF-8 the
// parser does not).
func scanItem(p []byte, i int) (itemKind, int) {
	c := p[i]
	switch {
	case isPrintableASCII(c):
		j := i + 1
		for j < len(p) && isPrintableASCII(p[j]) {
			j++
		}
		return itASCII, j - i
	case c == '\r':
		return itCR, 1
	case c == '\n':
		return itLF, 1
	case c == '\v' || c == '\f':
		return itGrid, 1
	case c == 0x0e || c == 0x0f: // SO, SI
		return itState, 1
	case c == 0x1b:
		return scanEsc(p, i)
	case c < 0x20 || c == 0x7f:
		return itLocal, 1 // BEL, BS, HT, or a control x/vt ignores
	case c < 0xa0:
		return itBarrier, 0 // C1
	case c < 0xc2 || c > 0xf4:
		return itIgnored, 1
	}
	n := 2 // the parser takes the next 1–3 bytes, whatever they are
	if c >= 0xf0 {
		n = 4
	} else if c >= 0xe0 {
		n = 3
	}
	if i+n > len(p) {
		return itIncomplete, 0
	}
	return itRune, n
}

func scanEsc(p []byte, i int) (itemKind, int) {
	if i+1 >= len(p) {
		return itIncomplete, 0
	}
	switch p[i+1] {
	case '[':
		return scanCSI(p, i)
	case ']':
		return scanOSC(p, i)
	case '\\':
		return itLocal, 2 // a lone ST: x/vt has no handler for it
	case '=', '>', 'n', 'o', '|', '}', '~': // keypad modes, locking shifts
		return itState, 2
	case 'D', 'M': // IND, RI
		return itGrid, 2
	case '(', ')', '*', '+':
		if i+2 >= len(p) {
			return itIncomplete, 0
		}
		switch p[i+2] {
		case 'A', 'B', '0': // the charsets x/vt knows
			return itState, 3
		}
	}
	return itBarrier, 0
}

func scanCSI(p []byte, i int) (itemKind, int) {
	j := i + 2
	var prefix, inter byte
	if j < len(p) && p[j] >= '<' && p[j] <= '?' {
		prefix = p[j]
		j++
	}
	start := j
	for j < len(p) && p[j] >= '0' && p[j] <= ';' {
		j++
	}
	params := p[start:j]
	if j < len(p) && p[j] >= ' ' && p[j] <= '/' {
		inter = p[j]
		j++
	}
	if j >= len(p) {
		return itIncomplete, 0
	}
	final := p[j]
	if final < '@' || final > '~' {
		return itBarrier, 0
	}
	n := j + 1 - i
	switch {
	case prefix == 0 && inter == 0:
		switch final {
		case 'K', 'X', 'G', '`', 'a', 'C', 'D', '@', 'P', 'I', 'Z':
			return itLocal, n
		case 'm':
			if sgrResets(params) {
				return itSGRReset, n
			}
			return itSGR, n
		case 'c': // DA1
			return itState, n
		case 'A', 'B', 'E', 'F', 'H', 'f', 'J', 'L', 'M', 'S', 'T', 'd', 'e':
			return itGrid, n
		}
	case prefix == 0 && inter == ' ' && final == 'q': // DECSCUSR
		return itState, n
	case prefix == '?' && inter == 0 && (final == 'h' || final == 'l'):
		if safeDECModes(params) {
			return itState, n
		}
	case prefix == '?' && inter == 0 && final == 'u':
		return itState, n
	case prefix != 0 && prefix != '?' && inter == 0:
		return itState, n
	}
	return itBarrier, 0
}

// sgrResets reports whether an SGR with these parameters begins with 0 (or
// nothing), which makes x/vt discard the whole pen first. False negatives
// only cost replay bytes.
func sgrResets(params []byte) bool {
	for _, c := range params {
		switch c {
		case '0':
		case ';', ':':
			return true
		default:
			return false
		}
	}
	return true
}

// safeDECModes reports whether every mode in a DECSET/DECRST only changes
// state that no cell or cursor position depends on: cursor keys, X10 and
// the mouse modes, cursor blink and visibility, keypad, focus reporting,
// bracketed paste, synchronized output.
func safeDECModes(params []byte) bool {
	count := 0
	for len(params) > 0 {
		var field []byte
		field, params, _ = cutByte(params, ';')
		if count++; count > 16 || len(field) > 5 {
			return false
		}
		if len(field) == 0 {
			continue // x/vt skips a missing parameter
		}
		v, err := strconv.Atoi(string(field))
		if err != nil {
			return false // ':' or a stray prefix byte
		}
		switch v {
		case 1, 9, 12, 25, 66, 1000, 1001, 1002, 1003, 1004, 1005, 1006, 1015, 1016, 2004, 2026:
		default:
			return false
		}
	}
	return true
}

func cutByte(b []byte, sep byte) (before, after []byte, found bool) {
	for i, c := range b {
		if c == sep {
			return b[:i], b[i+1:], true
		}
	}
	return b, nil, false
}

func scanOSC(p []byte, i int) (itemKind, int) {
	for j := i + 2; j < len(p); j++ {
		switch p[j] {
		case 0x07, 0x9c: // BEL, ST
			return itState, j + 1 - i
		case 0x1b: // dispatched here; the ESC begins the next item
			return itOSCOpen, j - i
		case 0x18, 0x1a: // CAN, SUB abort without dispatch
			return itBarrier, 0
		}
	}
	return itIncomplete, 0
}

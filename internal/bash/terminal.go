package bash

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"

	"agentsh/internal/pty"
)

// TerminalView runs a command with its output on the shell's terminal (the
// user's `!` commands): programs see a terminal (colours, pagers, full
// screen), the emulated Screen follows it, and keys go to it with Write.
// The persistent shell stays: `cd` and exports carry over as usual. Plain
// output still reaches the sink (and OnChunk) as text.
type TerminalView struct {
	Cols, Rows int // the terminal's size for the command; 0 = 120×40
	// OnTakeover is called once, from the run's loop, when the program
	// takes the screen (the UI then shows Screen and sends keys).
	OnTakeover func(pty.Takeover)

	mu     sync.Mutex
	s      *shellSession
	screen *pty.Screen
	took   atomic.Bool
	wake   chan struct{} // the terminal's reader saw the alternate screen
	// The end mark (an OSC sequence with the run's end nonce, which the
	// sink and the screen drop) that the epilogue writes to the terminal.
	endMark []byte
	endSeen chan struct{}
	tail    []byte // the last bytes read, for a mark split across reads

	// The screen is fed on a goroutine of its own, in batches of what
	// arrived meanwhile: the terminal's reader (and so the command's
	// output) never waits for the emulator, and a flood arrives in
	// batches big enough for the screen to skip ahead (pty.Screen.Feed).
	feedMu   sync.Mutex
	feedIdle *sync.Cond // signalled when the feeder stops
	pending  []byte
	feeding  bool
	hurry    chan struct{} // ends the feeder's pause in a flood (settle)
}

// errNotRunning refuses input once the command has ended.
var errNotRunning = errors.New("the command is not running")

// bind attaches the view to shell s for one run.
func (v *TerminalView) bind(s *shellSession) {
	cols, rows := v.Cols, v.Rows
	if cols <= 0 || rows <= 0 {
		cols, rows = DefaultPTYCols, DefaultPTYRows
	}
	cols, rows = pty.ClampSize(cols, rows)
	v.mu.Lock()
	v.s = s
	v.screen = pty.NewScreen(cols, rows, ptmWriter{s})
	v.wake = make(chan struct{}, 1)
	v.hurry = make(chan struct{}, 1)
	v.mu.Unlock()
	s.setWinsize(cols, rows)
	s.ttyDirty.Store(true) // keys and the emulator's answers may outlive the run
}

// expectEnd arms the end mark for the run with end nonce nonce.
func (v *TerminalView) expectEnd(nonce string) {
	v.mu.Lock()
	v.endMark = []byte("\x1b]6973;" + nonce + "\a")
	v.endSeen = make(chan struct{})
	v.tail = make([]byte, 0, 2*len(v.endMark))
	v.mu.Unlock()
}

// scanEnd looks for the end mark in what the terminal's reader got,
// without copying p: the mark is searched in p, and across the previous
// read's end in the last bytes kept from it.
func (v *TerminalView) scanEnd(p []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	mark := v.endMark
	if mark == nil {
		return
	}
	k := len(mark) - 1
	found := bytes.Contains(p, mark)
	if !found && len(v.tail) > 0 {
		joint := append(v.tail, p[:min(len(p), k)]...)
		found = bytes.Contains(joint, mark)
	}
	if found {
		close(v.endSeen)
		v.endMark, v.tail = nil, nil
		return
	}
	// Keep the last k bytes seen, in the same small buffer.
	if len(p) >= k {
		v.tail = append(v.tail[:0], p[len(p)-k:]...)
		return
	}
	v.tail = append(v.tail, p...)
	if len(v.tail) > k {
		v.tail = append(v.tail[:0], v.tail[len(v.tail)-k:]...)
	}
}

// writeEnd writes the run's end mark to the terminal through its slave pts,
// for a run whose shell died before its epilogue could.
func (v *TerminalView) writeEnd(pts *os.File) {
	v.mu.Lock()
	mark := v.endMark
	v.mu.Unlock()
	if mark != nil && pts != nil {
		_, _ = pts.Write(mark)
	}
}

// awaitEnd waits until the reader passed the end mark, at most d.
func (v *TerminalView) awaitEnd(d time.Duration) {
	v.mu.Lock()
	ch := v.endSeen
	v.mu.Unlock()
	if ch == nil {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ch:
	case <-t.C:
	}
}

// unbind ends the view's run: later Writes fail.
func (v *TerminalView) unbind() {
	v.mu.Lock()
	v.s = nil
	v.mu.Unlock()
}

// Screen is the command's emulated terminal (nil before the run started).
func (v *TerminalView) Screen() *pty.Screen {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.screen
}

// Write types p (keys as a terminal sends them) into the command.
func (v *TerminalView) Write(p []byte) (int, error) {
	v.mu.Lock()
	s := v.s
	v.mu.Unlock()
	if s == nil {
		return 0, errNotRunning
	}
	n, err := s.ptm.Write(p)
	if err != nil {
		return n, fmt.Errorf("write to the terminal: %w", err)
	}
	return n, nil
}

// Resize sets the terminal's size for the command and the screen's.
func (v *TerminalView) Resize(cols, rows int) {
	cols, rows = pty.ClampSize(cols, rows)
	v.mu.Lock()
	s, scr := v.s, v.screen
	v.mu.Unlock()
	if scr != nil {
		scr.Resize(cols, rows)
	}
	if s != nil {
		s.setWinsize(cols, rows)
	}
}

// takeover calls OnTakeover once.
func (v *TerminalView) takeover(why pty.Takeover) {
	if v.took.CompareAndSwap(false, true) && v.OnTakeover != nil {
		v.OnTakeover(why)
	}
}

// feed gives the screen what the terminal printed, from its reader: it
// queues p for the feeder and returns.
func (v *TerminalView) feed(p []byte) {
	v.mu.Lock()
	scr, wake := v.screen, v.wake
	v.mu.Unlock()
	if scr == nil {
		return
	}
	v.feedMu.Lock()
	v.pending = append(v.pending, p...)
	start := !v.feeding
	v.feeding = true
	v.feedMu.Unlock()
	if start {
		go v.feeder(scr, wake)
	}
}

// feeder feeds the queued output to scr until the queue is empty.
func (v *TerminalView) feeder(scr *pty.Screen, wake chan struct{}) {
	var batch []byte
	for {
		v.feedMu.Lock()
		if len(v.pending) == 0 {
			v.feeding = false
			if v.feedIdle != nil {
				v.feedIdle.Broadcast()
			}
			v.feedMu.Unlock()
			return
		}
		batch, v.pending = v.pending, batch[:0]
		v.feedMu.Unlock()
		scr.Feed(batch)
		if !v.took.Load() && scr.AltScreen() {
			select {
			case wake <- struct{}{}:
			default:
			}
		}
		if len(batch) >= floodBatch {
			// A flood: let the next batch grow big enough for the screen
			// to skip ahead over what scrolls off, instead of scrolling
			// line by line (a core and ~20 MB of garbage under `yes`).
			// The run's end (settle) cuts the pause short.
			t := time.NewTimer(floodPause)
			select {
			case <-t.C:
			case <-v.hurry:
			}
			t.Stop()
		}
	}
}

// A batch of floodBatch bytes or more means a flood; the feeder then waits
// floodPause before the next one (a frame: takeover and the last screen
// are never later than that).
const (
	floodBatch = 16 << 10
	floodPause = 16 * time.Millisecond
)

// settle waits until the screen has been fed everything queued: the run's
// result may be its last screen.
func (v *TerminalView) settle() {
	select {
	case v.hurry <- struct{}{}:
	default:
	}
	v.feedMu.Lock()
	defer v.feedMu.Unlock()
	if v.feedIdle == nil {
		v.feedIdle = sync.NewCond(&v.feedMu)
	}
	for v.feeding {
		v.feedIdle.Wait()
	}
}

// ptmWriter sends the emulator's answers (DA1, CPR) to the program.
type ptmWriter struct{ s *shellSession }

func (w ptmWriter) Write(p []byte) (int, error) { return w.s.ptm.Write(p) }

// setWinsize sets the terminal's size (the program gets SIGWINCH).
func (s *shellSession) setWinsize(cols, rows int) {
	_ = pty.Control(s.ptm, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	})
}

package bash

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"agentsh/internal/jobs"
	"agentsh/internal/pty"
	"agentsh/internal/sink"
)

// Detached is a foreground run of the engine that became a job (spec §9):
// the shell it runs in leaves the executor's pool, its loop goes on for the
// job, and the shell is closed with everything in it once the command ends
// or the job is killed. It is the job's jobs.Runner.
type Detached struct {
	s      *shellSession
	ctx    context.Context // the job's: cancelled by Kill
	cancel context.CancelFunc
	done   chan struct{}
	result pty.Result
	screen *pty.Screen

	mu      sync.Mutex
	onOut   func([]byte)
	pending *sink.TailBuffer // output between the hand-over and SetOnOutput
	// The screen is fed at most every screenEvery with the last
	// screenFeedMax bytes that came meanwhile: a flood would otherwise
	// spend a core in the emulator for text that scrolls off at once.
	unseen     *sink.TailBuffer
	screenWake chan struct{}
	screenQuit chan struct{}
	screenDone chan struct{}
}

// Pace and size of the screen's feed (see Detached.unseen).
const (
	screenEvery   = 30 * time.Millisecond
	screenFeedMax = 16 << 10
)

// echoWait bounds how long the output after typed input waits for the
// terminal's echo of it.
const echoWait = 20 * time.Millisecond

// ErrNoTerminal refuses input to a job whose command has /dev/null as
// stdin (bash.stdin "null").
var ErrNoTerminal = errors.New(`its stdin is not a terminal (bash.stdin is "null")`)

func newDetached(s *shellSession) *Detached {
	d := &Detached{s: s, done: make(chan struct{}), pending: sink.NewTailBuffer(sink.DefaultMaxBytes),
		screen: pty.NewScreen(DefaultPTYCols, DefaultPTYRows, nil),
		unseen: sink.NewRawTailBuffer(screenFeedMax), screenWake: make(chan struct{}, 1),
		screenQuit: make(chan struct{}), screenDone: make(chan struct{})}
	d.ctx, d.cancel = context.WithCancel(context.Background())
	go d.feedScreen()
	return d
}

// feedScreen moves the output that came since its last turn onto the
// screen, at most every screenEvery, until screenQuit (then once more).
func (d *Detached) feedScreen() {
	defer close(d.screenDone)
	for {
		quit := false
		select {
		case <-d.screenWake:
		case <-d.screenQuit:
			quit = true
		}
		d.mu.Lock()
		text := d.unseen.String()
		d.unseen = sink.NewRawTailBuffer(screenFeedMax)
		d.mu.Unlock()
		if text != "" {
			d.screen.Feed(toScreen([]byte(text)))
		}
		if quit {
			return
		}
		select {
		case <-time.After(screenEvery):
		case <-d.screenQuit:
		}
	}
}

// toScreenLater queues sanitized output for the screen (d.mu held).
func (d *Detached) toScreenLater(c []byte) {
	_, _ = d.unseen.Write(c)
	select {
	case d.screenWake <- struct{}{}:
	default:
	}
}

// record takes a sanitized chunk from the run's sink (with the sink
// locked, so in order).
func (d *Detached) record(c []byte) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.toScreenLater(c)
	if d.onOut != nil {
		d.onOut(c)
		return
	}
	_, _ = d.pending.Write(c)
}

// toScreen turns sanitized text (LF line ends) into what a terminal shows.
func toScreen(c []byte) []byte {
	return []byte(strings.ReplaceAll(string(c), "\n", "\r\n"))
}

// handover takes the run's output from out: the summary of what it printed
// so far, which also starts the screen, and every later chunk.
func (d *Detached) handover(out *sink.OutputSink) sink.Summary {
	// Locked across both, so a chunk recorded right after the hand-over
	// reaches the screen after the text before it.
	d.mu.Lock()
	defer d.mu.Unlock()
	sum := out.Handover(d.record)
	d.toScreenLater([]byte(sum.Output))
	return sum
}

// SetOnOutput sends the output held since the hand-over, then every later
// chunk, to f.
func (d *Detached) SetOnOutput(f func([]byte)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if held := d.pending.String(); held != "" {
		f([]byte(held))
	}
	d.pending = nil
	d.onOut = f
}

// Done is closed once the command has ended and its shell is gone.
func (d *Detached) Done() <-chan struct{} { return d.done }

// Wait returns the final result once Done is closed.
func (d *Detached) Wait() pty.Result {
	<-d.done
	return d.result
}

// Write types p into the command's terminal.
func (d *Detached) Write(p []byte) (int, error) {
	if d.s.ptm == nil {
		return 0, ErrNoTerminal
	}
	select {
	case <-d.done:
		return 0, pty.ErrNotRunning
	default:
	}
	d.s.echoDue.Store(time.Now().Add(echoWait).UnixNano())
	n, err := d.s.ptm.Write(p)
	if err != nil {
		return n, fmt.Errorf("write to the terminal: %w", err)
	}
	return n, nil
}

// Kill ends the command and every process of its shell, as a timeout does.
func (d *Detached) Kill() { d.cancel() }

// TTY is the path of the command's terminal ("" without one).
func (d *Detached) TTY() string { return d.s.ttyPath }

// Pid is the shell's: every process of the command is below it.
func (d *Detached) Pid() int { return d.s.pid }

// ForegroundPgrp is the terminal's foreground process group (the shell's
// own unless a command took the terminal); 0 when unknown.
func (d *Detached) ForegroundPgrp() int {
	if d.s.ptm == nil {
		return 0
	}
	pgrp := 0
	_ = pty.Control(d.s.ptm, func(fd int) error {
		v, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		if err == nil {
			pgrp = v
		}
		return err
	})
	return pgrp
}

// Screen is an emulated terminal showing the command's output since it
// became a job (its stdout is not the terminal, so this is the text as it
// came, a line per line).
func (d *Detached) Screen() *pty.Screen { return d.screen }

// Resize sets the terminal's size for the command and the screen's.
func (d *Detached) Resize(cols, rows int) {
	cols, rows = pty.ClampSize(cols, rows)
	d.screen.Resize(cols, rows)
	if d.s.ptm != nil {
		_ = pty.Control(d.s.ptm, func(fd int) error {
			return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
		})
	}
}

// follow runs the loop of a handed-over run to its end, then closes the
// shell and records the result the job reports.
func (d *Detached) follow(e *Executor, r *liveRun, out *sink.OutputSink, timeout time.Duration) {
	go func() {
		defer d.cancel()
		res, _ := r.loop(d.ctx, nil)
		e.release(r.s, true) // broken already: a job's shell is not reused
		notice := ""
		switch {
		case res.timedOut:
			notice = fmt.Sprintf("Command timed out after %d seconds", int(math.Round(timeout.Seconds())))
		case res.cancelled:
			notice = "Command cancelled"
		case res.reset:
			notice = ResetNotice
		case res.lingering:
			notice = LingerNotice
		}
		sum := out.Dump(notice)
		code := res.exitCode
		if res.timedOut || res.cancelled {
			code = nil
		}
		d.result = pty.Result{Summary: sum, ExitCode: code, Cancelled: res.cancelled, TimedOut: res.timedOut}
		close(d.screenQuit)
		<-d.screenDone
		d.screen.Close()
		close(d.done)
	}()
}

var _ jobs.Adoptee = (*Detached)(nil)

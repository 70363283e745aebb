package pty

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	cpty "github.com/creack/pty"
	"golang.org/x/sys/unix"

	"agentsh/internal/guard"
	"agentsh/internal/sandbox"
	"agentsh/internal/sink"
)

// Size bounds of a PTY session (spec §3).
const (
	MinCols = 20
	MaxCols = 400
	MinRows = 5
	MaxRows = 200
)

// DrainTimeout bounds how long output is still read after the program exits
// or is killed: a detached descendant holding the slave open must never keep
// the call from completing.
const DrainTimeout = 300 * time.Millisecond

// drainCap bounds the whole drain while output keeps coming: a detached
// descendant that never stops writing must not hold the call for longer.
const drainCap = 10 * DrainTimeout

// drainMore extends the drain's deadline when output arrived within the
// last DrainTimeout and the drain is younger than drainCap.
func (s *Session) drainMore() bool {
	from := s.drainFrom.Load()
	if from == 0 {
		return false
	}
	now := time.Now()
	if now.Sub(time.Unix(0, from)) >= drainCap || now.Sub(time.Unix(0, s.tk.lastOut.Load())) >= DrainTimeout {
		return false
	}
	return s.master.SetReadDeadline(now.Add(DrainTimeout)) == nil
}

// DefaultKillGrace is how long SIGTERM gets before SIGKILL.
const DefaultKillGrace = 200 * time.Millisecond

// maxPending bounds the output waiting for the emulator. Skip-ahead keeps it
// small on scrolling floods; only a flood the emulator cannot skip (the
// alternate screen) that outruns it for seconds reaches it, and then the
// reader waits rather than let memory grow without bound.
const maxPending = 64 << 20

// framePeriod and floodBytes pace the emulator during a flood: a batch of
// at least floodBytes is followed by a pause until framePeriod after it
// began, so the next batch gathers a frame's worth of output.
const (
	framePeriod = 16 * time.Millisecond
	floodBytes  = 32 << 10
)

// readBufSize is one read of the master; the kernel hands out at most a few
// KiB at a time, so this never limits throughput.
const readBufSize = 64 << 10

// markerVar carries a per-session random value in every process's
// environment, so descendants that setsid away are still found at kill time.
const markerVar = "AGENTSH_PTY_MARK"

// ErrNotRunning is returned by Write once the session has ended.
var ErrNotRunning = errors.New("PTY session is not running")

// Options configures a PTY session.
type Options struct {
	Shell   string // shell binary; the command runs as `<Shell> -c <Command>` unless Args says how
	Command string // the command line
	// Args, when set, are the shell's arguments after argv[0], which then
	// run Command their own way (internal/bash: from the session's rc
	// snapshot and state); nil = `-c Command`. Never a login shell: a
	// profile run at every start resets PATH and repeats its work.
	Args []string
	// Own are folders of the program's own (its start script): kept in a
	// sandbox's view and removed with the session.
	Own          []string
	Cwd          string        // working directory; "" = the current one
	Env          []string      // full environment; nil = BuildEnv(os.Environ())
	Cols, Rows   int           // initial size, clamped to 20–400 × 5–200
	Timeout      time.Duration // 0 = none
	ArtifactPath string        // spill file for the complete output; "" = none
	ArtifactID   string        // reported when the spill file was written
	// ArtifactMaxBytes caps the spill file; <= 0 = sink.DefaultArtifactMaxBytes.
	ArtifactMaxBytes int
	KillGrace        time.Duration // SIGTERM → SIGKILL; 0 = DefaultKillGrace
	// OnOutput receives each sanitized chunk of output as the sink records
	// it (the slice is valid only during the call; it must not block).
	OnOutput func([]byte)
	// OnTakeover, when set, is called once (from a goroutine of the
	// session) when the program switches to the alternate screen or waits
	// reading its terminal: the UI shows the screen from then on.
	OnTakeover func(Takeover)
	// Sandbox confines the program and everything it starts; nil or Mode
	// off: none.
	Sandbox *sandbox.Policy
}

// Result is the outcome of a session. Timeouts and kills are results, not
// errors; a start or runtime failure shows as "PTY error: …" in the output
// with no exit code.
type Result struct {
	sink.Summary
	ExitCode  *int // nil when killed, timed out or failed
	Cancelled bool // killed by Kill (esc) or by the caller's context
	TimedOut  bool // killed because the timeout passed (spec §3: explicit for PTY)
}

// endReason says why a session is being torn down.
type endReason int

const (
	endNone endReason = iota
	endExit           // the program exited by itself
	endKill
	endTimeout
	endError
)

// Session is one command running in a pseudo-terminal.
type Session struct {
	// drainFrom is when the drain after the end began (UnixNano; 0
	// before): from then on the reader's deadline moves while output
	// comes (drainMore).
	drainFrom atomic.Int64
	opts      Options
	screen    *Screen
	out       *sink.OutputSink
	master    *os.File
	tty       string         // the slave's path, e.g. /dev/pts/3
	guard     *guard.Process // the shell's guardian: ends every process of the session
	marker    []byte

	input *writeQueue

	mu      sync.Mutex
	reason  endReason
	runErr  error
	killReq chan struct{}
	once    sync.Once

	feedMu   sync.Mutex
	feedCond *sync.Cond
	pending  []byte
	spare    []byte
	readDone bool
	feeding  bool          // a batch is in Screen.Feed
	feedWake chan struct{} // the reader added output (capacity 1)
	readEnd  chan struct{} // closed when the reader stops

	done   chan struct{}
	result Result

	tk takeoverState
}

// ClampSize limits a requested size to what spec §3 allows.
func ClampSize(cols, rows int) (int, int) {
	return min(max(cols, MinCols), MaxCols), min(max(rows, MinRows), MaxRows)
}

// Start runs opts.Command in a new PTY. It never fails: when the program
// cannot be started, the session ends at once with "PTY error: …" as its
// output and no exit code, as spec §3 asks. ctx cancels the run like Kill.
func Start(ctx context.Context, opts Options) *Session {
	if opts.KillGrace <= 0 {
		opts.KillGrace = DefaultKillGrace
	}
	opts.Cols, opts.Rows = ClampSize(opts.Cols, opts.Rows)
	s := &Session{
		opts: opts,
		out: sink.New(sink.Options{ArtifactPath: opts.ArtifactPath, ArtifactID: opts.ArtifactID,
			ArtifactMaxBytes: opts.ArtifactMaxBytes, OnChunk: opts.OnOutput}),
		killReq:  make(chan struct{}),
		done:     make(chan struct{}),
		feedWake: make(chan struct{}, 1),
		readEnd:  make(chan struct{}),
	}
	s.feedCond = sync.NewCond(&s.feedMu)
	s.input = newWriteQueue()
	s.screen = NewScreen(opts.Cols, opts.Rows, s.input)
	if err := s.spawn(); err != nil {
		for _, d := range opts.Own {
			os.RemoveAll(d)
		}
		_, _ = fmt.Fprintf(s.out, "PTY error: %v\n", err)
		s.screen.Close()
		s.input.close()
		s.result = Result{Summary: s.out.Dump("")}
		close(s.done)
		return s
	}
	s.tk.lastOut.Store(time.Now().UnixNano())
	go s.writeLoop()
	go s.readLoop()
	go s.feedLoop()
	go s.supervise(ctx)
	if opts.OnTakeover != nil {
		go s.watchInput()
	}
	return s
}

// spawn opens the PTY and starts the shell on its slave side.
func (s *Session) spawn() error {
	shell := s.opts.Shell
	if shell == "" {
		shell = "/bin/sh"
	}
	var mark [12]byte
	_, _ = rand.Read(mark[:])
	markVal := hex.EncodeToString(mark[:])
	s.marker = []byte(markerVar + "=" + markVal)
	env := s.opts.Env
	if env == nil {
		env = BuildEnv(os.Environ())
	}
	env = append(env[:len(env):len(env)], "TERM=xterm-256color", string(s.marker))

	master, tty, err := cpty.Open()
	if err != nil {
		return fmt.Errorf("open pty: %w", err)
	}
	defer tty.Close()
	// creack/pty's helpers go through Fd(), which leaves the master
	// blocking: reads could then not be interrupted by a deadline or Close.
	if err := Control(master, func(fd int) error {
		if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(s.opts.Rows), Col: uint16(s.opts.Cols)}); err != nil {
			return err
		}
		return unix.SetNonblock(fd, true)
	}); err != nil {
		master.Close()
		return fmt.Errorf("set up pty: %w", err)
	}
	// Its own terminal and folders stay in its view.
	sb, err := GuardSandbox(s.opts.Sandbox, append([]string{tty.Name()}, s.opts.Own...)...)
	if err != nil {
		master.Close()
		return fmt.Errorf("start %s: %w", shell, err)
	}
	if sb != nil && sb.Ruleset != nil {
		defer sb.Ruleset.Close()
	}
	// A session of its own with the PTY as controlling terminal, below a
	// guardian that ends every process of the session when it is disposed
	// of, or when agentsh dies.
	// argv[0] is the name: messages read "bash: …" as in a terminal.
	args := append([]string{filepath.Base(shell)}, s.opts.Args...)
	if s.opts.Args == nil {
		args = append(args, "-c", s.opts.Command)
	}
	g, err := guard.Start(guard.Cmd{
		Path:    shell,
		Args:    args,
		Env:     env,
		Dir:     s.opts.Cwd,
		Files:   []*os.File{tty, tty, tty},
		Setsid:  true,
		Setctty: true,
		Marker:  s.marker,
		Grace:   s.opts.KillGrace,
		Sandbox: sb,
		Cleanup: s.opts.Own,
	})
	if err != nil {
		master.Close()
		return fmt.Errorf("start %s: %w", shell, err)
	}
	s.master, s.guard, s.tty = master, g, tty.Name()
	return nil
}

// Control runs fn on f's descriptor without putting it back into blocking
// mode (which os.File.Fd would do to a PTY master on the netpoller).
func Control(f *os.File, fn func(fd int) error) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}

// Screen is the emulated terminal the overlay draws.
func (s *Session) Screen() *Screen { return s.screen }

// Pid is the shell's process id (0 when it never started).
func (s *Session) Pid() int {
	if s.guard == nil {
		return 0
	}
	return s.guard.Pid()
}

// TTY is the path of the terminal the program runs on (e.g. /dev/pts/3);
// "" when it never started.
func (s *Session) TTY() string { return s.tty }

// ForegroundPgrp is the terminal's foreground process group (TIOCGPGRP on
// the master), or 0 once the session has ended or when it cannot be told.
func (s *Session) ForegroundPgrp() int {
	select {
	case <-s.done:
		return 0
	default:
	}
	if s.master == nil {
		return 0
	}
	pgrp := 0
	_ = Control(s.master, func(fd int) error {
		p, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		if err == nil {
			pgrp = p
		}
		return err
	})
	return pgrp
}

// Done is closed when the session has ended and its result is ready.
func (s *Session) Done() <-chan struct{} { return s.done }

// Wait blocks until the session has ended and returns its result.
func (s *Session) Wait() Result {
	<-s.done
	return s.result
}

// Write forwards the user's keys to the program, normalized for a legacy
// terminal (Kitty sequences, DECCKM; see NormalizeInput). It never blocks.
func (s *Session) Write(p []byte) (int, error) {
	select {
	case <-s.done:
		return 0, ErrNotRunning
	default:
	}
	s.input.push(NormalizeInput(nil, p, s.screen.AppCursor()))
	return len(p), nil
}

// Resize changes the terminal size (clamped) of the PTY and the screen; the
// program gets SIGWINCH from the kernel.
func (s *Session) Resize(cols, rows int) {
	cols, rows = ClampSize(cols, rows)
	select {
	case <-s.done:
		return
	default:
	}
	_ = Control(s.master, func(fd int) error {
		return unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: uint16(rows), Col: uint16(cols)})
	})
	s.screen.Resize(cols, rows)
}

// Kill ends the program and everything it started (esc in the overlay);
// the result is Cancelled. It returns at once; Wait for the result.
func (s *Session) Kill() { s.end(endKill, nil) }

// Close kills whatever still runs and waits for the session to end.
func (s *Session) Close() Result {
	s.Kill()
	return s.Wait()
}

// end records the first reason to tear the session down and wakes the
// supervisor.
func (s *Session) end(r endReason, err error) {
	s.mu.Lock()
	if s.reason == endNone {
		s.reason, s.runErr = r, err
	}
	s.mu.Unlock()
	s.once.Do(func() { close(s.killReq) })
}

// supervise waits for the program to exit or for a reason to kill it, then
// drains, sweeps and publishes the result.
func (s *Session) supervise(ctx context.Context) {
	waited := s.guard.Exited()
	var timeout <-chan time.Time
	if s.opts.Timeout > 0 {
		t := time.NewTimer(s.opts.Timeout)
		defer t.Stop()
		timeout = t.C
	}
	select {
	case <-waited:
	case <-ctx.Done():
		s.end(endKill, nil)
	case <-timeout:
		s.end(endTimeout, nil)
	case <-s.killReq:
	}
	// A normal exit wins over a Kill that comes after it (esc during the
	// drain): the program ended by itself and has an exit code.
	s.mu.Lock()
	select {
	case <-waited:
		if s.reason == endNone {
			s.reason = endExit
		}
	default:
	}
	exited := s.reason == endExit
	s.mu.Unlock()
	if !exited {
		s.kill()
		<-waited
	}
	// Drain what the program wrote before it went: the reader stops at EIO
	// (every slave closed) or once the terminal was quiet for DrainTimeout
	// (a descendant holds it), at the latest drainCap after the end.
	s.drainFrom.Store(time.Now().UnixNano())
	_ = s.master.SetReadDeadline(time.Now().Add(DrainTimeout))
	s.waitRead()
	// Dispose: nothing of the session outlives it, like closing a terminal.
	s.guard.Stop()
	s.waitFed()
	s.input.close()
	s.master.Close()
	s.screen.Close()

	s.mu.Lock()
	reason, runErr := s.reason, s.runErr
	s.mu.Unlock()
	res := Result{}
	switch reason {
	case endExit:
		if code, known := s.guard.ExitCode(); known {
			res.ExitCode = &code
		}
	case endKill:
		res.Cancelled = true
	case endTimeout:
		res.TimedOut = true
	case endError:
		_, _ = fmt.Fprintf(s.out, "\nPTY error: %v\n", runErr)
	}
	notice := ""
	switch {
	case res.TimedOut:
		notice = fmt.Sprintf("Command timed out after %d seconds", int(math.Round(s.opts.Timeout.Seconds())))
	case res.Cancelled:
		notice = "Command cancelled"
	}
	res.Summary = s.out.Dump(notice)
	applyFullScreen(&res, s.screen, notice)
	s.result = res
	close(s.done)
}

// kill signals the terminal's foreground process group and every process of
// the session: SIGTERM, then SIGKILL after the grace, until none is left.
func (s *Session) kill() {
	_ = Control(s.master, func(fd int) error {
		pgrp, err := unix.IoctlGetInt(fd, unix.TIOCGPGRP)
		if err == nil && pgrp > 1 {
			_ = syscall.Kill(-pgrp, syscall.SIGTERM)
		}
		return err
	})
	s.guard.Stop()
}

// readLoop reads the master as fast as the program writes: every byte goes
// to the sink, and to the emulator's queue.
func (s *Session) readLoop() {
	buf := make([]byte, readBufSize)
	defer func() {
		s.feedMu.Lock()
		s.readDone = true
		s.feedCond.Broadcast()
		s.feedMu.Unlock()
		close(s.readEnd)
	}()
	for {
		n, err := s.master.Read(buf)
		if n > 0 {
			s.tk.lastOut.Store(time.Now().UnixNano())
			_, _ = s.out.Write(buf[:n])
			s.feedMu.Lock()
			for len(s.pending) >= maxPending {
				s.feedCond.Wait()
			}
			s.pending = append(s.pending, buf[:n]...)
			s.feedMu.Unlock()
			select {
			case s.feedWake <- struct{}{}:
			default:
			}
		}
		switch {
		case err == nil:
		case errors.Is(err, os.ErrDeadlineExceeded) && s.drainMore():
			// Output is still coming (a loaded machine, or the screen
			// holding the reader back): a byte written before the end
			// is never dropped for a deadline.
		case err == io.EOF, errors.Is(err, syscall.EIO), errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, os.ErrClosed):
			return
		default:
			s.end(endError, fmt.Errorf("read: %w", err))
			return
		}
	}
}

// feedLoop hands the emulator everything that accumulated while it was
// busy, so a slow emulator sees big batches (which it may skip through)
// instead of slowing the reader. During a flood it takes at most one batch
// per frame: nobody sees more than that, and every batch costs the emulator
// a screenful of scrolling however much of it is skipped.
func (s *Session) feedLoop() {
	pace := time.NewTimer(0)
	defer pace.Stop()
	for {
		s.feedMu.Lock()
		batch, done := s.pending, s.readDone
		if len(batch) == 0 {
			s.feedMu.Unlock()
			if done {
				return
			}
			select {
			case <-s.feedWake:
			case <-s.readEnd:
			}
			continue
		}
		s.pending = s.spare[:0]
		s.feeding = true
		s.feedCond.Broadcast()
		s.feedMu.Unlock()

		start := time.Now()
		s.screen.Feed(batch)
		if s.opts.OnTakeover != nil && !s.tk.took.Load() && s.screen.AltScreen() {
			go s.takeover(TakeoverFullScreen)
		}

		s.feedMu.Lock()
		s.feeding = false
		s.feedCond.Broadcast()
		if cap(batch) <= 4*readBufSize {
			s.spare = batch[:0]
		} else {
			s.spare = nil // let a flood's big buffer go
		}
		s.feedMu.Unlock()

		if len(batch) >= floodBytes && !done {
			pace.Reset(time.Until(start.Add(framePeriod)))
			select {
			case <-pace.C:
			case <-s.readEnd:
				if !pace.Stop() {
					<-pace.C
				}
			}
		}
	}
}

// waitRead returns once the reader has stopped.
func (s *Session) waitRead() {
	s.feedMu.Lock()
	for !s.readDone {
		s.feedCond.Wait()
	}
	s.feedMu.Unlock()
}

// waitFed returns once the emulator has consumed all read output.
func (s *Session) waitFed() {
	s.feedMu.Lock()
	for len(s.pending) > 0 || !s.readDone || s.feeding {
		s.feedCond.Wait()
	}
	s.feedMu.Unlock()
}

// writeLoop writes keys and emulator replies to the program in order.
func (s *Session) writeLoop() {
	for {
		p, ok := s.input.next()
		if !ok {
			return
		}
		if _, err := s.master.Write(p); err != nil {
			s.input.close()
			return
		}
	}
}

// writeQueue is an unbounded FIFO of byte chunks: writers (the TUI's key
// handler, the emulator's replies) never wait for the program to read.
type writeQueue struct {
	mu     sync.Mutex
	cond   *sync.Cond
	chunks [][]byte
	closed bool
}

func newWriteQueue() *writeQueue {
	q := &writeQueue{}
	q.cond = sync.NewCond(&q.mu)
	return q
}

// Write queues a copy of p (the emulator reuses its buffer); after close
// it discards.
func (q *writeQueue) Write(p []byte) (int, error) {
	q.push(append([]byte(nil), p...))
	return len(p), nil
}

// push queues p itself, which the caller must not touch again.
func (q *writeQueue) push(p []byte) {
	if len(p) == 0 {
		return
	}
	q.mu.Lock()
	if !q.closed {
		q.chunks = append(q.chunks, p)
		q.cond.Signal()
	}
	q.mu.Unlock()
}

func (q *writeQueue) next() ([]byte, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.chunks) == 0 && !q.closed {
		q.cond.Wait()
	}
	if q.closed {
		return nil, false
	}
	p := q.chunks[0]
	q.chunks[0] = nil
	q.chunks = q.chunks[1:]
	return p, true
}

func (q *writeQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.chunks = nil
	q.cond.Broadcast()
	q.mu.Unlock()
}

package bash

import (
	"agentsh/internal/jobs"
	"agentsh/internal/proc"
	"agentsh/internal/pty"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

const (
	drainSilence   = 250 * time.Millisecond
	drainTotal     = 2 * time.Second
	readBufferSize = 1 << 20
	// lingerPause rate-limits the discard loop of a background job that
	// keeps writing after its run: at most one read per pause.
	lingerPause = 20 * time.Millisecond
	// holdCheckAfter is how long after the end line the output may take
	// to reach EOF before the shell's own fds are examined.
	holdCheckAfter = 3 * time.Millisecond
)

var bufPool = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// DetachReason says why a foreground command became a job (spec §9).
type DetachReason int

// The reasons, as BashResult.JobReason gives them.
const (
	DetachNone  DetachReason = iota
	DetachTimer              // still running after bash.autoBackgroundSeconds
	DetachInput              // blocked reading its terminal with no output for a second
	DetachUser               // the user moved it to the background (ctrl+b)
)

// detachSpec lets a run become a job instead of holding its call.
type detachSpec struct {
	after   time.Duration   // still running after this long (0 = never)
	onInput bool            // waiting for input on the shell's terminal
	now     <-chan struct{} // closed when the user asks
	// adopt is called at the moment one of them happens, from the run's
	// loop; true means the run was handed over: the call returns, the loop
	// goes on for the job.
	adopt func(r *liveRun, why DetachReason) bool
}

// liveRun is a run past its start acknowledgement: the reader of its
// output and the loop that waits for its end. A run that becomes a job
// keeps both, below its Detached.
type liveRun struct {
	s        *shellSession
	spec     runSpec
	rd       *os.File
	fifo     string
	w        io.Writer
	endNonce string
	applied  uint64 // the state's version applied before it, if didApply
	didApply bool
	// appliedBase is the user's layer applied with it (see shellSession.base).
	appliedBase *layer
	before      bool // the shell dumped its state before the command too (st0)
	started     time.Time
	timer       *time.Timer // the timeout's; nil = none
	timeoutC    <-chan time.Time
	isEnd       func(string) bool
	// handedOver: the run became a job; its loop goes on for the job.
	handedOver bool
	view       *TerminalView // the run's output is on the terminal; nil = the FIFO
	endView    *TerminalView // view's end mark, awaited also once the run is a job

	draining  atomic.Bool
	drainEnd  atomic.Int64
	readerEnd chan bool // true = reached EOF, false = stopped by the drain bound
	cut       atomic.Bool
	late      atomic.Bool // the drain hit its total bound: output kept coming

	out                                   runOutcome
	readerDone, haveExit, quiet, idleSeen bool
	statusC                               <-chan string
	doneC                                 <-chan struct{}
	watch                                 *time.Timer
	watchC                                <-chan time.Time
	holdCheck                             *time.Timer
	holdC                                 <-chan time.Time
}

// startReader starts the only goroutine that writes the FIFO's output to
// w (on a shell with a terminal, w is shared with the terminal's reader
// through a syncWriter).
func (r *liveRun) startReader(stop *headStop) {
	s, rd, w := r.s, r.rd, r.w
	r.readerEnd = make(chan bool, 1)
	go func() {
		_ = os.Remove(r.fifo) // the shell has it open; off the critical path
		bp := bufPool.Get().(*[]byte)
		buf := *bp
		eof := true
		tty := s.ptm != nil
		for {
			n, err := rd.Read(buf)
			if n > 0 {
				if tty {
					s.lastOut.Store(time.Now().UnixNano())
					if due := s.echoDue.Load(); due != 0 {
						s.awaitEcho(due)
					}
				}
				chunk, cut := buf[:n], false
				if stop != nil {
					chunk, cut = stop.feed(chunk)
				}
				if len(chunk) > 0 {
					_, _ = w.Write(chunk)
				}
				if cut {
					r.cut.Store(true)
					break
				}
				if r.draining.Load() {
					d := time.Now().Add(drainSilence)
					if end := time.Unix(0, r.drainEnd.Load()); end.Before(d) {
						d = end
					}
					_ = rd.SetReadDeadline(d)
				}
			}
			if err != nil {
				if held := stop.flush(); len(held) > 0 {
					_, _ = w.Write(held)
				}
				eof = !errors.Is(err, os.ErrDeadlineExceeded)
				if !eof && time.Now().UnixNano() >= r.drainEnd.Load() {
					r.late.Store(true)
				}
				break
			}
		}
		bufPool.Put(bp)
		r.readerEnd <- eof
		if eof {
			rd.Close()
			return
		}
		// Something of this run (a background job) still holds the output
		// open. Keep draining into nothing so it never blocks or dies of
		// SIGPIPE, at a bounded pace so a chatty job costs agentsh almost
		// nothing; the session closes it on eviction.
		if !s.linger(rd) {
			rd.Close()
			return
		}
		_ = rd.SetReadDeadline(time.Time{})
		small := make([]byte, 64<<10)
		for {
			if _, err := rd.Read(small); err != nil {
				break
			}
			time.Sleep(lingerPause)
		}
		s.unlinger(rd)
		rd.Close()
	}()
	r.statusC, r.doneC = s.status, s.done
	r.watch = time.NewTimer(idleFirst)
	r.watchC = r.watch.C
}

func (r *liveRun) startDrain(d time.Duration) {
	now := time.Now()
	r.drainEnd.Store(now.Add(drainTotal).UnixNano())
	r.draining.Store(true)
	_ = r.rd.SetReadDeadline(now.Add(d))
}

// waitingForInput reports whether a process of the run sleeps reading the
// shell's terminal after quiet without output (the shell's own `read`
// included).
func (r *liveRun) waitingForInput(quiet time.Duration) bool {
	s := r.s
	if s.ptm == nil || time.Since(r.started) < quiet ||
		time.Since(time.Unix(0, s.lastOut.Load())) < quiet {
		return false
	}
	// The shell leads the terminal's foreground group (its own `read`).
	return proc.ReadingTerminal(s.pid, s.pid, s.ttyPath)
}

// loop waits for the run's end. With det, it may instead hand the run over
// at a detach point (det.adopt): it then returns the reason, and the caller
// runs loop again, without det and with the job's context, for the rest.
func (r *liveRun) loop(ctx context.Context, det *detachSpec) (runOutcome, DetachReason) {
	s := r.s
	var autoC <-chan time.Time
	var nowC <-chan struct{}
	var autoT *time.Timer
	onInput := false
	armAuto := false // the auto-background timer is made at the first watchdog look: a quick command never pays for it
	if det != nil {
		armAuto = det.after > 0
		nowC = det.now
		// With its output on the terminal, a waiting program gets the
		// user's keys (TerminalView) instead of becoming a job.
		onInput = det.onInput && s.ptm != nil && r.view == nil
	}
	var viewC <-chan struct{}
	if r.view != nil {
		viewC = r.view.wake
	}
	defer func() {
		if autoT != nil {
			autoT.Stop()
		}
	}()
	detach := func(why DetachReason) bool {
		if r.haveExit || (r.readerDone && r.view == nil) || !det.adopt(r, why) {
			return false
		}
		return true
	}
	for {
		select {
		case line, ok := <-r.statusC:
			if !ok {
				// The status channel closed: the shell exited or exec'd
				// another program (`exec sleep 100` keeps running as the
				// session). The exit status comes with doneC; ctx and the
				// timeout stay in force meanwhile.
				r.statusC, r.watchC = nil, nil
				s.broken.Store(true)
				if armAuto { // no more watchdog looks to arm it
					armAuto = false
					autoT = time.NewTimer(det.after - time.Since(r.started))
					autoC = autoT.C
				}
			} else if line == "P" || strings.HasPrefix(line, "enable -n ") {
				// Builtins the protocol needs may be disabled: this run
				// reports normally, the next one gets a fresh shell.
				s.broken.Store(true)
			} else if code, found := endLine(line, r.endNonce); found {
				r.out.exitCode = &code
				r.statusC, r.doneC, r.watchC, r.haveExit = nil, nil, nil, true
				if !r.readerDone {
					// EOF usually follows within microseconds; only
					// when it does not, look at who holds the output.
					r.startDrain(drainSilence)
					r.holdCheck = time.NewTimer(holdCheckAfter)
					r.holdC = r.holdCheck.C
				}
			}
		case <-r.holdC:
			r.holdC = nil
			if !r.readerDone {
				d, q := s.afterExitDrain(r.rd)
				r.quiet = q
				r.startDrain(d)
			}
		case <-r.doneC:
			// The shell is gone (exit, exec, kill -9 $$, set -e). A
			// background subshell may still hold the status socket open,
			// so this, not its EOF, is what ends the wait.
			r.doneC, r.watchC = nil, nil
			s.broken.Store(true)
			code := s.exit
			if r.statusC != nil {
				if line, ok := s.pendingStatus(r.isEnd, statusGrace); ok {
					code, _ = endLine(line, r.endNonce)
				}
			}
			r.out.exitCode = &code
			r.statusC, r.haveExit = nil, true
			if !r.readerDone {
				r.startDrain(drainSilence)
			}
		case <-r.watchC:
			if armAuto {
				armAuto = false
				autoT = time.NewTimer(det.after - time.Since(r.started))
				autoC = autoT.C
			}
			if r.view != nil && !r.view.took.Load() && r.waitingForInput(pty.QuietForTakeover) {
				r.view.takeover(pty.TakeoverInput)
			}
			if onInput && r.waitingForInput(jobs.QuietForInput) {
				if detach(DetachInput) {
					return r.out, DetachInput
				}
				onInput = false
			}
			if !s.idle() {
				r.idleSeen = false
				r.watch.Reset(idleEvery)
				continue
			}
			if !r.idleSeen {
				// Seen idle once: an end line written just before may
				// still be on its way through a loaded machine. Idle
				// again at the next look, with no end line in between,
				// is the answer.
				r.idleSeen = true
				r.watch.Reset(idleConfirm)
				continue
			}
			// Back at its control socket without an end line: the
			// epilogue did not run. A line it did write is already in
			// the socket; else report the output with the reset notice.
			r.watchC = nil
			if line, ok := s.pendingStatus(r.isEnd, idleGrace); ok {
				code, _ := endLine(line, r.endNonce)
				r.out.exitCode = &code
			} else {
				r.out.reset = true
				// Nothing of the broken shell may run on; a stopped
				// shell must be continued for its SIGTERM to act. Its
				// death also closes its copy of the output.
				_ = syscall.Kill(s.pid, syscall.SIGCONT)
				s.guard.Stop()
			}
			s.broken.Store(true)
			r.statusC, r.doneC, r.haveExit = nil, nil, true
			if !r.readerDone {
				r.startDrain(drainSilence)
			}
		case <-viewC:
			viewC = nil
			r.view.takeover(pty.TakeoverFullScreen)
		case <-autoC:
			autoC = nil
			if detach(DetachTimer) {
				return r.out, DetachTimer
			}
		case <-nowC:
			nowC = nil
			if detach(DetachUser) {
				return r.out, DetachUser
			}
		case eof := <-r.readerEnd:
			r.readerDone = true
			r.readerEnd = nil
			// Only a holder that kept writing after the end is worth a
			// word: bash's own forks often hold the output without writing.
			r.out.lingering = !eof && !r.quiet && r.late.Load()
		case <-ctx.Done():
			r.out.cancelled = true
		case <-r.timeoutC:
			r.out.timedOut = true
		}
		if r.out.cancelled || r.out.timedOut {
			s.broken.Store(true)
			s.guard.Stop()
			if !r.readerDone {
				// Every writer is dead now; EOF follows at once unless an
				// escaped process holds the FIFO.
				r.startDrain(drainSilence)
				<-r.readerEnd
			}
			r.out.exitCode = nil
			r.out.lingering = false
			r.finish()
			return r.out, DetachNone
		}
		if r.haveExit && r.readerDone {
			if r.didApply {
				s.state, s.stateVer, s.stateView = r.spec.state, r.applied, r.spec.view
				if r.appliedBase != nil {
					s.base = r.appliedBase
				}
			}
			spec := r.spec
			// A job's end does not move the session (its `cd` happened
			// long after the call returned); its shell is not reused.
			if r.before && !r.out.reset && !r.handedOver {
				if dump, err := os.ReadFile(filepath.Join(s.dir, "st0")); err == nil {
					if l, _, ok := parseDump(dump, spec.cfgEnv, &s.optNames); ok {
						s.base = l
					}
				}
			}
			if spec.state != nil && spec.capture != CaptureNone && !r.out.reset && !r.handedOver {
				if dump, err := os.ReadFile(filepath.Join(s.dir, "st")); err == nil &&
					spec.state.update(dump, spec.capture, spec.view, s.base, spec.scrub, spec.cfgEnv, &s.optNames) {
					s.state, s.stateVer, s.stateView = spec.state, spec.state.version(spec.view), spec.view
					if spec.view == UserView {
						s.base = nil // the user's layer is what it holds now
					}
				}
			}
			r.out.cut = r.cut.Load()
			if r.out.cut {
				r.out.lingering = false
			}
			r.finish()
			return r.out, DetachNone
		}
	}
}

// finish stops the run's timers and detaches the terminal from its output.
func (r *liveRun) finish() {
	r.watch.Stop()
	if r.holdCheck != nil {
		r.holdCheck.Stop()
	}
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.s.ptm != nil {
		if ev := r.endView; ev != nil && r.out.exitCode != nil && !r.out.reset {
			if r.s.exited() {
				// A dead shell writes no end mark: agentsh writes it
				// through the slave it holds, behind whatever the shell
				// printed before it died (`echo bye; exit 3`).
				ev.writeEnd(r.s.pts)
			}
			// Also for a job: its last output ("got y" after the
			// prompt it waited at) is read before the run ends.
			ev.awaitEnd(terminalEndWait)
		}
		r.s.drainTerminal()
		r.s.ttyOut.Store(nil)
		r.s.ttyEnd.Store(nil)
	}
}

// afterExitDrain is called when the end line arrived but the output has not
// reached EOF. If the only holders of the run's FIFO are the shell's own
// fds (a command ran `exec 3>&1`), those fds are re-pointed at the next
// run's output, as a terminal would keep them, and nothing is waited for;
// otherwise background processes hold it and the usual drain applies.
func (s *shellSession) afterExitDrain(rd *os.File) (time.Duration, bool) {
	fds := proc.FileHolders(s.pid, rd)
	if len(fds) == 0 {
		return drainSilence, false
	}
	var b strings.Builder
	for _, fd := range fds {
		if fd == 19 { // the epilogue could not close it: exec is shadowed
			s.broken.Store(true)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%d>&19", fd)
	}
	s.aliases = b.String()
	pids, _ := proc.SessionProcs(s.pid, s.marker, s.guard.StartTime())
	for _, p := range pids {
		if p != s.pid {
			return drainSilence, false
		}
	}
	return time.Millisecond, true
}

func (s *shellSession) linger(f *os.File) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.lingering = append(s.lingering, f)
	return true
}

func (s *shellSession) unlinger(f *os.File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, g := range s.lingering {
		if g == f {
			s.lingering = append(s.lingering[:i], s.lingering[i+1:]...)
			return
		}
	}
}

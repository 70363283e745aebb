package bash

import (
	"agentsh/internal/proc"
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// runSpec is one run's request to a shell.
type runSpec struct {
	cwd, command string
	timeout      time.Duration
	stop         *headStop     // nil = the output is read to its end
	state        *SessionState // nil = the shell keeps its own state
	view         StateView     // which layers of state the shell gets (and captures into)
	capture      CaptureMode
	scrub        []string          // names kept from this shell when the state is applied
	cfgEnv       map[string]string // the shell's shell.env: the settings' own, not the state's
	detach       *detachSpec       // nil = the run holds its call to the end
	terminal     *TerminalView     // output on the shell's terminal too (needs one); nil = the FIFO
}

// runOutcome is the engine-level result of one run on one session.
type runOutcome struct {
	exitCode  *int
	cancelled bool // by the caller's context
	timedOut  bool
	retry     bool // the command never started; safe to run it on a fresh session
	cut       bool // output closed after stopLines lines, as a `| head` would
	reset     bool // the command broke the shell: no exit status, shell replaced
	lingering bool // something of the run still wrote to the output after the drain window
	err       error
	// detached is the run handed over to a job (detachSpec.adopt): it is
	// still going, and its loop must be run on to its end.
	detached     *liveRun
	detachReason DetachReason
}

// run executes one command. Output goes to w from a single goroutine; run
// returns only after that goroutine has stopped writing to w.
//
// spec.stop closes the output once the final pipeline printed up to the
// limit, so its writers get SIGPIPE as they would from the `| head -n N`
// that NormalizeCommand removed (an endless producer must not run to the
// timeout).
func (s *shellSession) run(ctx context.Context, spec runSpec, w io.Writer) runOutcome {
	cwd, command, timeout := spec.cwd, spec.command, spec.timeout
	if len(s.ownEnv) > 0 {
		env := maps.Clone(spec.cfgEnv)
		if env == nil {
			env = map[string]string{}
		}
		maps.Copy(env, s.ownEnv)
		spec.cfgEnv = env
	}
	if strings.IndexByte(cwd, 0) >= 0 {
		return runOutcome{err: errors.New("working directory contains a NUL byte")}
	}
	var prep preparedFifo
	select {
	case prep = <-s.next:
	case <-s.done:
		s.broken.Store(true)
		return runOutcome{retry: true, err: errors.New("shell exited before the command started")}
	}
	if prep.err != nil {
		s.broken.Store(true)
		return runOutcome{retry: true, err: prep.err}
	}
	rd, hold, fifo := prep.rd, prep.hold, prep.path
	defer s.schedulePrepare() // the one after the next is made while this runs
	startNonce, endNonce := newNonces()
	isStart := func(l string) bool { ok, fail := startLine(l, startNonce); return ok && !fail }

	// Single-quoted assignments: bash parses them with one buffered read
	// of the file, and no text inside single quotes can be a syntax error.
	// The start nonce comes last: if any assignment fails (a readonly
	// engine variable), the shell acknowledges with a stale nonce.
	req := make([]byte, 0, len(cwd)+len(command)+len(s.aliases)+100)
	req = append(req, "__agentsh_w="...)
	req = appendShellQuoted(req, cwd)
	req = append(req, " __agentsh_o="...)
	view := spec.terminal
	if s.ptm == nil {
		view = nil
	}
	if view != nil {
		// Its output goes to the terminal; the FIFO gets no writer and
		// reads EOF at once.
		req = appendShellQuoted(req, s.ttyPath)
	} else {
		req = appendShellQuoted(req, fifo)
	}
	req = append(req, " __agentsh_c="...)
	req = appendShellQuoted(req, command)
	req = append(req, " __agentsh_x="...)
	req = appendShellQuoted(req, s.aliases)
	// The session state: applied before the command when this shell is
	// behind, captured after it when the command may have changed it.
	applied, didApply := uint64(0), false
	var appliedBase *layer
	req = append(req, " __agentsh_p="...)
	if st := spec.state; st != nil {
		// Nothing captured yet still means the session's directory for a
		// run without one of its own.
		if v := st.version(spec.view); (v > 0 || cwd == "") && (s.state != st || s.stateVer != v || s.stateView != spec.view) {
			applyPath := filepath.Join(s.dir, "a")
			script, base := st.applyScript(spec.view, spec.scrub, cwd == "", spec.cfgEnv)
			removeScratch(applyPath)
			if err := os.WriteFile(applyPath, script, 0o600); err == nil {
				req = appendShellQuoted(req, applyPath)
				applied, didApply, appliedBase = v, true, base
			}
		}
	}
	req = append(req, " __agentsh_s="...)
	// 1: dump the state after the command; 2: before (st0) and after;
	// 3: before only. A shell that holds no user's layer yet has its own
	// state before anything of the model's was applied to it as the base
	// its captures are compared with: it dumps it once, before the first
	// run that captures or applies the model's layer.
	capture := spec.state != nil && spec.capture != CaptureNone
	before := spec.state != nil && appliedBase == nil && s.base == nil &&
		((spec.view == ModelView && (capture || applied > 0)) || (capture && spec.state.version(UserView) == 0))
	switch {
	case capture && before:
		req = append(req, '2')
	case capture:
		req = append(req, '1')
	case before:
		req = append(req, '3')
	}
	if capture {
		removeScratch(filepath.Join(s.dir, "st"))
	}
	if before {
		removeScratch(filepath.Join(s.dir, "st0"))
	}
	req = append(req, " __agentsh_q="...)
	if len(s.optNames.shopt) > 0 {
		// The names are known: the dump gives the enabled options only.
		req = append(req, '1')
	}
	req = append(req, " __agentsh_t="...)
	if view != nil {
		// The epilogue writes this end mark to the terminal after the
		// command: the run is over once the terminal's reader passed it.
		req = append(req, endNonce...)
	}
	req = append(req, " __agentsh_n="...)
	req = append(req, startNonce...)
	req = append(req, '\n')
	_, err := s.cmdFile.WriteAt(req, 0)
	if err == nil {
		err = s.cmdFile.Truncate(int64(len(req)))
	}
	if err != nil {
		hold.Close()
		rd.Close()
		s.broken.Store(true)
		return runOutcome{retry: true, err: fmt.Errorf("write command: %w", err)}
	}
	// A run handed over to a job keeps its timer and its terminal output.
	handedOver := false
	var timer *time.Timer
	var timeoutC <-chan time.Time
	if timeout > 0 {
		timer = time.NewTimer(timeout)
		timeoutC = timer.C
		defer func() {
			if !handedOver {
				timer.Stop()
			}
		}()
	}
	runStart := time.Now()
	if s.ptm != nil {
		s.resetTerminal()
		s.lastOut.Store(runStart.UnixNano())
		sw := &syncWriter{w: w}
		w = sw
		s.ttyOut.Store(sw)
		if view != nil {
			view.bind(s)
			view.expectEnd(endNonce)
			s.ttyView.Store(view)
			s.ttyEnd.Store(view)
		}
		defer func() {
			if !handedOver {
				s.ttyOut.Store(nil)
				s.ttyEnd.Store(nil)
			}
			if view != nil {
				s.ttyView.Store(nil)
				view.unbind()
			}
		}()
	}
	line := make([]byte, 0, len(requestAlias)+nonceLen+3)
	line = append(append(append(append(line, requestAlias...), ' '), endNonce...), "\n\n"...)
	if _, err := s.ctl.Write(line); err != nil {
		hold.Close()
		rd.Close()
		s.broken.Store(true)
		return runOutcome{retry: true, err: fmt.Errorf("send request: %w", err)}
	}

	// Wait for the start acknowledgement. A shell that goes back to
	// reading its control socket without one has a broken prologue, and
	// one that died or was stopped never sends one; the command never ran,
	// so it is safe to retry on a fresh shell. A shell that is alive and
	// busy (a loaded machine, a slow DEBUG trap) is waited for, however
	// long, within the run's timeout: no clock tells a slow shell from a
	// dead one, the kernel does (ackState).
	poll := time.NewTimer(ackIdleEvery)
	stoppedSeen := false
	cpu0 := uint64(0) // the shell's CPU time at the first look: a run acknowledged before it pays nothing
	looked := false
	started := false
	notStarted := func(err error) runOutcome {
		poll.Stop()
		hold.Close()
		rd.Close()
		s.broken.Store(true)
		return runOutcome{retry: true, err: err}
	}
	for !started {
		select {
		case line, ok := <-s.status:
			if !ok {
				return notStarted(errors.New("shell exited before the command started"))
			}
			if ok, fail := startLine(line, startNonce); ok {
				if fail {
					return notStarted(errors.New("shell could not open the output fifo"))
				}
				started = true
			}
		case <-s.done:
			// It died: if it got as far as opening the output, the command
			// ran (and must not run again); otherwise it is safe to retry.
			if _, ok := s.pendingStatus(isStart, statusGrace); ok {
				started = true
				continue
			}
			return notStarted(errors.New("shell exited before the command started"))
		case <-poll.C:
			if !looked {
				looked = true
				if st, ok := proc.Stat(s.pid); ok {
					cpu0 = st.CPU
				}
			}
			why := s.ackState(cpu0)
			if why == ackStopped && !stoppedSeen {
				// Stopped once may be a stop and continue in flight.
				stoppedSeen = true
				poll.Reset(idleConfirm)
				continue
			}
			stoppedSeen = false
			if why != ackBusy {
				if _, ok := s.pendingStatus(isStart, ackIdleGrace); ok {
					started = true
					continue
				}
				return notStarted(fmt.Errorf("shell did not acknowledge the command: %s", why))
			}
			if time.Since(runStart) < time.Second {
				poll.Reset(ackIdleEvery)
			} else {
				poll.Reset(idleEvery) // a slow machine: look less often
			}
		case <-ctx.Done():
			poll.Stop()
			hold.Close()
			rd.Close()
			s.broken.Store(true)
			return runOutcome{cancelled: true}
		case <-timeoutC:
			poll.Stop()
			hold.Close()
			rd.Close()
			s.broken.Store(true)
			return runOutcome{timedOut: true}
		}
	}
	poll.Stop()
	hold.Close()
	s.aliases = ""

	r := &liveRun{s: s, spec: spec, rd: rd, fifo: fifo, w: w, endNonce: endNonce, applied: applied, didApply: didApply, appliedBase: appliedBase, before: before,
		timer: timer, timeoutC: timeoutC, started: runStart, view: view, endView: view}
	r.isEnd = func(l string) bool { _, ok := endLine(l, endNonce); return ok }
	r.startReader(spec.stop)
	out, why := r.loop(ctx, spec.detach)
	if why != 0 {
		handedOver = true
		r.handedOver = true
		r.view = nil // the UI lets go of a job
		out.detached, out.detachReason = r, why
	}
	return out
}

// preparedAhead is how many output FIFOs are kept ready: with two, even
// back-to-back runs never wait for one to be made.
const preparedAhead = 2

// preparedFifo is an output FIFO opened for reading, with a placeholder
// writer that keeps the reader from seeing EOF before the shell opens it.
type preparedFifo struct {
	path     string
	rd, hold *os.File
	err      error
}

// prepareFifo makes the output FIFO for the next run. It runs off the
// critical path, right after a run ends, because making and opening a FIFO
// costs as much as a whole warm round trip.
func (s *shellSession) prepareFifo() preparedFifo {
	fifo := filepath.Join(s.dir, "o"+strconv.FormatInt(s.fifoSeq.Add(1), 10))
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		return preparedFifo{err: fmt.Errorf("make output fifo: %w", err)}
	}
	rd, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return preparedFifo{err: fmt.Errorf("open output fifo: %w", err)}
	}
	hold, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		rd.Close()
		return preparedFifo{err: fmt.Errorf("open output fifo: %w", err)}
	}
	setPipeSize(rd, fifoPipeSize)
	return preparedFifo{path: fifo, rd: rd, hold: hold}
}

// schedulePrepare makes one more FIFO in the background, unless the session
// is closing (close waits for the ones in flight and closes them).
func (s *shellSession) schedulePrepare() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.prepWG.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.prepWG.Done()
		s.next <- s.prepareFifo()
	}()
}

const fifoPipeSize = 1 << 20

func setPipeSize(f *os.File, size int) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, 1031 /* F_SETPIPE_SZ */, uintptr(size))
		})
	}
}

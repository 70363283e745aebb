package bash

import (
	"agentsh/internal/guard"
	"agentsh/internal/pty"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The session protocol. bash reads its script from a control pipe on stdin,
// one byte per read(2) (bash must not read ahead of its own input), so each
// request is one short alias line. The command text itself travels through a
// file (cwd NUL command) that the shell reads with one builtin read, and its
// merged stdout/stderr go to a FIFO made fresh for every run: a background job
// of an earlier run holds that run's FIFO, never the current one. Status lines
// come back on the shell's own stdout, which the command never sees (its
// stdout and stderr are the FIFO). Everything lives in a tmpfs folder when
// there is one: file and FIFO creation on a disk file system cost more than
// the whole rest of a warm run.
// The empty line after each request matters: after a syntax error inside the
// eval, bash does not alias-expand the next line it reads, and that line is
// then the harmless empty one instead of the next request.
//
//	R <pid>   session ready
//	S         run started (output FIFO opened by the shell)
//	F         the shell could not open the FIFO
//	E <code>  command finished with exit status code
const (
	markerVar      = "AGENTSH_SHELL_MARK"
	requestLine    = "__agentsh_r\n\n"
	startTimeout   = 10 * time.Second // shell start and snapshot sourcing
	ackTimeout     = 5 * time.Second  // request sent → S; only a poisoned shell misses it
	drainSilence   = 250 * time.Millisecond
	drainTotal     = 2 * time.Second
	statusGrace    = 200 * time.Millisecond // for a status line still in flight when the shell died
	readBufferSize = 1 << 20
	fifoPipeSize   = 1 << 20
)

const initScript = `\exec 1>&3 3>&- 62</dev/null
__agentsh_d=%s
%s
\builtin shopt -s expand_aliases
__agentsh_b() {
	\builtin source "$__agentsh_d/c"
	\builtin export -n __agentsh_w __agentsh_o __agentsh_c # under set -a they would reach every child
	\exec 9>"$__agentsh_o" || { \builtin printf 'F\n'; \builtin return 125; }
	\builtin printf 'S\n'
}
__agentsh_e() {
	\exec 9>&-
	\builtin unset __agentsh_c __agentsh_w __agentsh_o
	# Undo what a command may have done to the protocol itself.
	\builtin read -t 0 -u 62 || \exec 62</dev/null
	[[ $BASHOPTS == *expand_aliases* ]] || \builtin shopt -s expand_aliases
	[[ ${BASH_ALIASES[__agentsh_r]-} == "$__agentsh_a" ]] || \builtin alias __agentsh_r="$__agentsh_a"
	\builtin printf 'E %%d\n' "$1"
}
__agentsh_a='__agentsh_b&&{ [[ -z $__agentsh_w ]]||\builtin cd -- "$__agentsh_w"&&\builtin eval "$__agentsh_c" 9>&-;}>&9 2>&1 <&62;__agentsh_e "$?"'
\builtin alias __agentsh_r="$__agentsh_a"
\builtin printf 'R %%d\n' "$$"
`

var bufPool = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// shellSession is one long-lived bash process. It runs one command at a time;
// the executor's pool guarantees exclusive use.
type shellSession struct {
	cfg    ShellConfig
	key    string
	guard  *guard.Process // the shell's guardian: ends every process of the session
	ctl    *os.File
	status chan string
	done   chan struct{} // closed once the shell has exited (or its guardian is gone)
	exit   int           // exit status of the shell, valid after done
	dir    string
	marker []byte

	mu        sync.Mutex
	lingering []*os.File // FIFOs of finished runs still held open by background jobs
	closed    bool
	broken    atomic.Bool

	cmdFile *os.File          // rewritten in place for every run (no create/truncate-open)
	next    chan preparedFifo // output FIFOs for the next runs, made while the shell is idle
	prepWG  sync.WaitGroup    // preparations in flight
	fifoSeq atomic.Int64
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

// runtimeDir prefers a memory file system for the per-session folder.
func runtimeDir() string {
	for _, d := range []string{os.Getenv("XDG_RUNTIME_DIR"), "/dev/shm"} {
		if d == "" {
			continue
		}
		if st, err := os.Stat(d); err == nil && st.IsDir() && syscall.Access(d, 2 /* W_OK */) == nil {
			return d
		}
	}
	return os.TempDir()
}

func shellQuote(s string) string {
	return string(appendShellQuoted(nil, s))
}

// appendShellQuoted appends s as one single-quoted bash word.
func appendShellQuoted(b []byte, s string) []byte {
	b = append(b, '\'')
	for {
		i := strings.IndexByte(s, '\'')
		if i < 0 {
			break
		}
		b = append(append(b, s[:i]...), `'\''`...)
		s = s[i+1:]
	}
	return append(append(b, s...), '\'')
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Runtime folders are named after their owner (guard.MkdirOwned), so that a
// later start removes the ones a SIGKILLed agentsh left behind.
const runtimePrefix = "agentsh-sh-"

var removeStaleOnce sync.Once

// removeStale removes the runtime and snapshot folders of dead agentsh
// processes, once per process, before it makes its own.
func removeStale() {
	removeStaleOnce.Do(func() {
		guard.RemoveStale(runtimeDir(), runtimePrefix)
		guard.RemoveStale(os.TempDir(), snapshotPrefix)
	})
}

// startSession starts bash in its own session and process group, below a
// guardian (internal/guard), and waits until it has sourced the snapshot and
// defined the protocol functions.
func startSession(cfg ShellConfig, key, cwd string, grace time.Duration) (*shellSession, error) {
	removeStale()
	dir, err := guard.MkdirOwned(runtimeDir(), runtimePrefix)
	if err != nil {
		return nil, fmt.Errorf("start shell: %w", err)
	}
	s := &shellSession{cfg: cfg, key: key, dir: dir,
		status: make(chan string, 8), done: make(chan struct{})}
	s.marker = []byte(markerVar + "=" + randomHex(8))
	fail := func(err error) (*shellSession, error) {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start shell: %w", err)
	}
	snap := ""
	if cfg.SnapshotPath != "" {
		snap = `\builtin . ` + shellQuote(cfg.SnapshotPath) + ` >/dev/null 2>&1 </dev/null`
	}
	initPath := filepath.Join(dir, "init")
	if err := os.WriteFile(initPath, fmt.Appendf(nil, initScript, shellQuote(dir), snap), 0o600); err != nil {
		return fail(err)
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return fail(err)
	}
	stR, stW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return fail(err)
	}
	_ = cwd // the first run cds itself; a missing dir must not fail the start
	g, err := guard.Start(guard.Cmd{
		Path: cfg.Path,
		Args: []string{filepath.Base(cfg.Path), "--noprofile", "--norc"}, // messages read "bash: …" as in a terminal
		Env:  pty.BuildEnv(os.Environ(), cfg.Env, map[string]string{markerVar: string(s.marker[len(markerVar)+1:])}),
		// stdin is the control pipe, fd 3 the status pipe.
		Files:   []*os.File{ctlR, nil, nil, stW},
		Setsid:  true,
		Marker:  s.marker,
		Grace:   grace,
		Cleanup: []string{dir},
	})
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return fail(err)
	}
	s.guard, s.ctl = g, ctlW
	s.next = make(chan preparedFifo, preparedAhead)
	for i := 0; i < preparedAhead; i++ {
		s.schedulePrepare()
	}
	if s.cmdFile, err = os.OpenFile(filepath.Join(dir, "c"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
		s.close()
		return nil, fmt.Errorf("start shell: %w", err)
	}
	go func() {
		s.exit, _ = g.ExitCode()
		close(s.done)
	}()
	go func() {
		r := bufio.NewReader(stR)
		for {
			line, err := r.ReadString('\n')
			if len(line) > 0 && line[len(line)-1] == '\n' {
				s.status <- line[:len(line)-1]
			}
			if err != nil {
				break
			}
		}
		stR.Close()
		close(s.status)
	}()
	if _, err := io.WriteString(ctlW, `\builtin . `+shellQuote(initPath)+"\n"); err != nil {
		s.close()
		return nil, fmt.Errorf("start shell: %w", err)
	}
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case line, ok := <-s.status:
		if ok && strings.HasPrefix(line, "R ") {
			return s, nil
		}
		s.close()
		return nil, fmt.Errorf("start shell: %s exited during start-up (agentsh needs bash as shell.path)", cfg.Path)
	case <-timer.C:
		s.close()
		return nil, fmt.Errorf("start shell: %s did not become ready within %v", cfg.Path, startTimeout)
	}
}

// alive reports whether the shell can take another run.
func (s *shellSession) alive() bool {
	if s.broken.Load() {
		return false
	}
	select {
	case <-s.done:
		return false
	default:
		return true
	}
}

// close ends the shell and every process of its session, including
// background jobs left by earlier runs.
func (s *shellSession) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	ling := s.lingering
	s.lingering = nil
	s.mu.Unlock()
	s.broken.Store(true)
	if s.ctl != nil {
		s.ctl.Close() // EOF on its script: an idle shell exits by itself, running EXIT traps
	}
	if s.guard != nil {
		select {
		case <-s.done:
		case <-time.After(20 * time.Millisecond):
		}
		s.guard.Stop() // after a cancel it has already swept: returns at once
	}
	for _, f := range ling {
		f.Close()
	}
	s.prepWG.Wait()
	for drained := false; !drained; {
		select {
		case p := <-s.next:
			if p.err == nil {
				p.rd.Close()
				p.hold.Close()
			}
		default:
			drained = true
		}
	}
	if s.cmdFile != nil {
		s.cmdFile.Close()
	}
	os.RemoveAll(s.dir)
}

// runOutcome is the engine-level result of one run on one session.
type runOutcome struct {
	exitCode  *int
	cancelled bool // by the caller's context
	timedOut  bool
	retry     bool // the command never started; safe to run it on a fresh session
	cut       bool // output closed after stopLines lines, as a `| head` would
	err       error
}

// pendingStatus waits up to wait for a status line starting with prefix
// that the shell wrote before it died; other lines are skipped.
func (s *shellSession) pendingStatus(prefix string, wait time.Duration) (string, bool) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case line, ok := <-s.status:
			if !ok {
				return "", false
			}
			if strings.HasPrefix(line, prefix) {
				return line, true
			}
		case <-t.C:
			return "", false
		}
	}
}

func setPipeSize(f *os.File, size int) {
	if rc, err := f.SyscallConn(); err == nil {
		_ = rc.Control(func(fd uintptr) {
			_, _, _ = syscall.Syscall(syscall.SYS_FCNTL, fd, 1031 /* F_SETPIPE_SZ */, uintptr(size))
		})
	}
}

// run executes one command. Output goes to w from a single goroutine; run
// returns only after that goroutine has stopped writing to w.
//
// stopLines > 0 closes the output after that many newlines have arrived, so
// the writers get SIGPIPE exactly as they would from the `| head -n N` that
// NormalizeCommand removed (an endless producer must not run to the timeout).
func (s *shellSession) run(ctx context.Context, cwd, command string, timeout time.Duration, stopLines int, w io.Writer) runOutcome {
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

	// Single-quoted assignments: bash parses them with one buffered read
	// of the file, and no text inside single quotes can be a syntax error.
	req := make([]byte, 0, len(cwd)+len(command)+40)
	req = append(req, "__agentsh_w="...)
	req = appendShellQuoted(req, cwd)
	req = append(req, " __agentsh_o="...)
	req = appendShellQuoted(req, fifo)
	req = append(req, " __agentsh_c="...)
	req = appendShellQuoted(req, command)
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
	var timeoutC <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timeoutC = t.C
	}
	if _, err := io.WriteString(s.ctl, requestLine); err != nil {
		hold.Close()
		rd.Close()
		s.broken.Store(true)
		return runOutcome{retry: true, err: fmt.Errorf("send request: %w", err)}
	}

	// Wait for the start acknowledgement.
	ack := time.NewTimer(ackTimeout)
	started := false
	for !started {
		select {
		case line, ok := <-s.status:
			switch {
			case !ok:
				hold.Close()
				rd.Close()
				s.broken.Store(true)
				return runOutcome{retry: true, err: errors.New("shell exited before the command started")}
			case line == "S":
				started = true
			case line == "F":
				hold.Close()
				rd.Close()
				s.broken.Store(true)
				return runOutcome{retry: true, err: errors.New("shell could not open the output fifo")}
			}
		case <-s.done:
			// It died: if it got as far as opening the output, the command
			// ran (and must not run again); otherwise it is safe to retry.
			if _, ok := s.pendingStatus("S", statusGrace); ok {
				started = true
				continue
			}
			hold.Close()
			rd.Close()
			s.broken.Store(true)
			return runOutcome{retry: true, err: errors.New("shell exited before the command started")}
		case <-ack.C:
			hold.Close()
			rd.Close()
			s.broken.Store(true)
			return runOutcome{retry: true, err: errors.New("shell did not acknowledge the command")}
		case <-ctx.Done():
			hold.Close()
			rd.Close()
			s.broken.Store(true)
			return runOutcome{cancelled: true}
		case <-timeoutC:
			hold.Close()
			rd.Close()
			s.broken.Store(true)
			return runOutcome{timedOut: true}
		}
	}
	ack.Stop()
	hold.Close()
	_ = os.Remove(fifo)

	// Reader: the only goroutine that writes to w.
	var (
		draining  atomic.Bool
		drainEnd  atomic.Int64
		readerEnd = make(chan bool, 1) // true = reached EOF, false = stopped by the drain bound
		cut       atomic.Bool
	)
	go func() {
		bp := bufPool.Get().(*[]byte)
		buf := *bp
		eof := true
		lines := 0
		for {
			n, err := rd.Read(buf)
			if n > 0 {
				chunk := buf[:n]
				if stopLines > 0 {
					nl := bytes.Count(chunk, []byte{'\n'})
					if lines+nl >= stopLines {
						// Keep exactly what `| head -n N` would have let through.
						end := 0
						for ; lines < stopLines; lines++ {
							end += bytes.IndexByte(chunk[end:], '\n') + 1
						}
						_, _ = w.Write(chunk[:end])
						cut.Store(true)
						break
					}
					lines += nl
				}
				_, _ = w.Write(chunk)
				if draining.Load() {
					d := time.Now().Add(drainSilence)
					if end := time.Unix(0, drainEnd.Load()); end.Before(d) {
						d = end
					}
					_ = rd.SetReadDeadline(d)
				}
			}
			if err != nil {
				eof = !errors.Is(err, os.ErrDeadlineExceeded)
				break
			}
		}
		bufPool.Put(bp)
		readerEnd <- eof
		if eof {
			rd.Close()
			return
		}
		// Something of this run (a background job) still holds the output
		// open. Keep draining into nothing so it never blocks or dies of
		// SIGPIPE; the session closes it on eviction.
		if !s.linger(rd) {
			rd.Close()
			return
		}
		_ = rd.SetReadDeadline(time.Time{})
		small := make([]byte, 32<<10)
		for {
			if _, err := rd.Read(small); err != nil {
				break
			}
		}
		s.unlinger(rd)
		rd.Close()
	}()
	startDrain := func() {
		now := time.Now()
		drainEnd.Store(now.Add(drainTotal).UnixNano())
		draining.Store(true)
		_ = rd.SetReadDeadline(now.Add(drainSilence))
	}

	var out runOutcome
	readerDone, haveExit := false, false
	statusC, doneC := s.status, s.done
	for {
		select {
		case line, ok := <-statusC:
			if !ok {
				// The status pipe closed: the shell exited or exec'd another
				// program (`exec sleep 100` keeps running as the session).
				// The exit status comes with doneC; ctx and the timeout stay
				// in force meanwhile.
				statusC = nil
				s.broken.Store(true)
			} else if rest, found := strings.CutPrefix(line, "E "); found {
				code, err := strconv.Atoi(rest)
				if err != nil {
					s.broken.Store(true)
				} else {
					out.exitCode = &code
				}
				statusC, doneC, haveExit = nil, nil, true
				if !readerDone {
					startDrain()
				}
			}
		case <-doneC:
			// The shell is gone (exit, exec, kill -9 $$, set -e). A
			// background subshell may still hold the status pipe open, so
			// this, not the pipe's EOF, is what ends the wait.
			doneC = nil
			s.broken.Store(true)
			code := s.exit
			if statusC != nil {
				if line, ok := s.pendingStatus("E ", statusGrace); ok {
					if c, err := strconv.Atoi(strings.TrimPrefix(line, "E ")); err == nil {
						code = c
					}
				}
			}
			out.exitCode = &code
			statusC, haveExit = nil, true
			if !readerDone {
				startDrain()
			}
		case <-readerEnd:
			readerDone = true
			readerEnd = nil
		case <-ctx.Done():
			out.cancelled = true
		case <-timeoutC:
			out.timedOut = true
		}
		if out.cancelled || out.timedOut {
			s.broken.Store(true)
			s.guard.Stop()
			if !readerDone {
				// Every writer is dead now; EOF follows at once unless an
				// escaped process holds the FIFO.
				startDrain()
				<-readerEnd
			}
			out.exitCode = nil
			return out
		}
		if haveExit && readerDone {
			out.cut = cut.Load()
			return out
		}
	}
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

package bash

import (
	"agentsh/internal/guard"
	"agentsh/internal/jobs"
	"agentsh/internal/proc"
	"agentsh/internal/pty"
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	cpty "github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// The session protocol. bash reads its script from a control socket on
// stdin, one byte per read(2) (bash must not read ahead of its own input), so
// each request is one short alias line. The command text itself travels
// through a file of single-quoted assignments that the shell sources, and its
// merged stdout/stderr go to a FIFO made fresh for every run: a background job
// of an earlier run holds that run's FIFO, never the current one. Status lines
// come back on the shell's own stdout, which the command never sees (its
// stdout and stderr are the FIFO). Everything lives in a tmpfs folder when
// there is one: file and FIFO creation on a disk file system cost more than
// the whole rest of a warm run.
//
// Integrity (docs/decisions/0004): control and status are socketpairs, so
// nothing can open them through /proc/<pid>/fd (sockets refuse open(2)) and
// writing to the control end from a command reaches agentsh, not the shell's
// input. Every status line carries a per-run nonce: the start nonce comes
// from the command file (a stale one means the file's assignments failed),
// the end nonce is the last word of the request line, so it exists only in
// bash's parsed command, never in a variable a command could read. A line
// without the run's nonce is ignored. A shell that stops answering (a
// command broke the prologue or epilogue) is found from the kernel: blocked
// reading its control socket, or stopped, with no status line.
// The empty line after each request matters: after a syntax error inside the
// eval, bash does not alias-expand the next line it reads, and that line is
// then the harmless empty one instead of the next request.
//
//	R <pid>             session ready
//	S <start nonce>     run started (output FIFO opened, eval works)
//	F <start nonce>     the shell could not open the FIFO
//	P                   the epilogue found builtins disabled (enable -n): replace the shell
//	E <end nonce> <rc>  command finished with exit status rc
const (
	markerVar      = "AGENTSH_SHELL_MARK"
	requestAlias   = "__ar"
	startTimeout   = 10 * time.Second // shell start and snapshot sourcing
	drainSilence   = 250 * time.Millisecond
	drainTotal     = 2 * time.Second
	statusGrace    = 200 * time.Millisecond // for a status line still in flight when the shell died
	readBufferSize = 1 << 20
	fifoPipeSize   = 1 << 20
	nonceLen       = 10
	// idleFirst and idleEvery pace the watchdog that finds a shell which
	// stopped answering: a run that ends normally never reaches it.
	ackIdleEvery = 20 * time.Millisecond
	idleFirst    = 50 * time.Millisecond
	idleGrace    = 20 * time.Millisecond  // for an end line already written when the shell is found idle
	idleConfirm  = 100 * time.Millisecond // between the two looks that find the shell idle
	ackIdleGrace = 250 * time.Millisecond // for a start line in flight when the shell is found idle
	idleEvery    = 200 * time.Millisecond
	// lingerPause rate-limits the discard loop of a background job that
	// keeps writing after its run: at most one read per pause.
	lingerPause = 20 * time.Millisecond
	// terminalDrain bounds the wait for the terminal's last output at the
	// end of a run.
	terminalDrain = 50 * time.Millisecond
	// terminalEndWait bounds the wait for the end mark of a run whose
	// output went to the terminal.
	terminalEndWait = 10 * time.Second
	// holdCheckAfter is how long after the end line the output may take
	// to reach EOF before the shell's own fds are examined.
	holdCheckAfter = 3 * time.Millisecond
)

// ResetNotice is the first line of a run whose command broke the shell: the
// output so far is kept, the exit status is unknown, and the next run gets a
// fresh shell.
const ResetNotice = "Shell reset: the command broke the shell's control protocol, so its exit status is unknown; the next command runs in a fresh shell"

// LingerNotice is added when background processes of a run still write to
// its output after the drain window.
const LingerNotice = "A background process is still writing to this output; what it writes from now on is discarded (to keep it, redirect it: cmd > file 2>&1 &)"

// requestAliasText is what the request alias expands to; the end nonce
// follows it on the request line and becomes __agentsh_e's second argument.
// The command's stdin is /dev/null, or the shell's terminal (requestAlias).
const requestAliasText = `\__agentsh_b&&{ \builtin eval "$__agentsh_c";}>&19 2>&1 </dev/null;\__agentsh_e "$?"`

// requestAliasFor is requestAliasText with stdin from tty ("" = /dev/null).
func requestAliasFor(tty string) string {
	if tty == "" {
		return requestAliasText
	}
	return strings.Replace(requestAliasText, "</dev/null", "<"+shellQuote(tty), 1)
}

// initScript defines the protocol. Everything is called through \builtin
// (aliases cannot shadow it) except exec, whose redirections persist only
// when it is called directly; a function named exec leaves fd 19 open after
// the epilogue, which afterExitDrain finds (and the state never carries such
// a function into another shell). Disabled builtins (enable -n eval) are
// listed by the epilogue's `enable -n` on the status channel, and the shell
// is replaced after that run. The command's stdin is opened anew for every
// run: a kept fd would need a check per run that costs more than the open.
// The prologue's cd is skipped when the shell is already there.
// A command that closed the copies bash keeps of its stdin and stdout
// around a run (`for fd in $(seq 3 255); do exec {fd}>&-; done`) leaves
// the shell reading its next commands from the command's stdin and writing
// its status into the run's output: the epilogue then exits with the
// command's status instead (both channels are sockets, nothing else is),
// and the next run gets a fresh shell. With exit disabled, the expansion
// error of the missing third argument ends it (status 1): no command can
// give a function call an argument.
const initScript = `\exec 1>&3 3>&- %s
__agentsh_d=%s
%s
\builtin shopt -s expand_aliases
__agentsh_b() {
	\builtin source "$__agentsh_d/c" || \builtin return 125
	\builtin export -n __agentsh_w __agentsh_o __agentsh_c __agentsh_x __agentsh_p __agentsh_s __agentsh_n __agentsh_t __agentsh_q # under set -a they would reach every child
	\exec 19>"$__agentsh_o" || { \builtin printf 'F %%s\n' "$__agentsh_n"; \builtin return 125; }
	[[ -z $__agentsh_x ]] || \builtin eval "\exec $__agentsh_x" 2>/dev/null
	\builtin printf 'S %%s\n' "$__agentsh_n"
	[[ $__agentsh_s != [23] ]] || \__agentsh_dump st0
	[[ -z $__agentsh_p ]] || \builtin source "$__agentsh_p" >/dev/null 2>&1
	[[ -z $__agentsh_w || $__agentsh_w == "$PWD" ]] || \builtin cd -- "$__agentsh_w" 2>&19
}
__agentsh_dump() {
	\builtin local -a __agentsh_v; \builtin local __agentsh_i
	\builtin local __agentsh_f="$__agentsh_d/${1:-st}"
	\builtin compgen -e >|"$__agentsh_f.e" 2>/dev/null; \builtin mapfile -t __agentsh_v <"$__agentsh_f.e"
	{
		\builtin printf 'P\0%%s\0' "$PWD"
		for __agentsh_i in "${__agentsh_v[@]}"; do \builtin printf 'X\0%%s\0%%s\0' "$__agentsh_i" "${!__agentsh_i}"; done
		\builtin compgen -A function >|"$__agentsh_f.f" 2>/dev/null; \builtin mapfile -t __agentsh_v <"$__agentsh_f.f"
		for __agentsh_i in "${__agentsh_v[@]}"; do [[ $__agentsh_i == @(__agentsh*|builtin|exec) ]] || { \builtin printf 'f\0%%s\0' "$__agentsh_i"; \builtin declare -f -- "$__agentsh_i"; \builtin printf '\0'; }; done
		for __agentsh_i in "${!BASH_ALIASES[@]}"; do [[ $__agentsh_i == __ar ]] || \builtin printf 'a\0%%s\0%%s\0' "$__agentsh_i" "${BASH_ALIASES[$__agentsh_i]}"; done
		if [[ -n $__agentsh_q ]]; then \builtin printf 'o\0%%s\0%%s\0Z\0' "$BASHOPTS" "$SHELLOPTS"
		else \builtin printf 'O\0'; \builtin shopt -p; \builtin set +o; \builtin printf '\0Z\0'; fi
	} >|"$__agentsh_f" 2>/dev/null
}
__agentsh_e() {
	\exec 19>&-
	[[ -z $__agentsh_t ]] || \builtin printf '\033]6973;%%s\007' "$__agentsh_t" >"$__agentsh_o" 2>/dev/null
	[[ $__agentsh_s != [12] ]] || \__agentsh_dump
	\builtin unset -n __agentsh_c __agentsh_w __agentsh_o __agentsh_x __agentsh_p __agentsh_s __agentsh_n __agentsh_t __agentsh_q
	[[ $BASHOPTS == *expand_aliases* ]] || \builtin shopt -s expand_aliases
	[[ ${BASH_ALIASES[__ar]-} == '%s' ]] || \builtin alias __ar='%s'
	[[ -S /dev/fd/0 && -S /dev/fd/1 ]] || { \builtin exit "$1"; [[ ${3:?} ]]; } 2>/dev/null
	\builtin enable -n || \builtin printf 'P\n'
	\builtin printf 'E %%s %%d\n' "$2" "$1"
}
\builtin alias __ar='%s'
\builtin printf 'R %%d\n' "$$"
`

// placeholderFds keep fds 10–18 open on /dev/null in the shell, so the
// copies bash saves of fds 0–2 around each run land above them: a command's
// `exec 11>file` then replaces a placeholder, as in a terminal, instead of
// bash's saved stdout (which it would silently keep).
// One exec each: bash 5.2 drops some fds of one exec with several
// redirections above 9.
const placeholderFds = "\n\\exec 10</dev/null\n\\exec 11</dev/null\n\\exec 12</dev/null\n\\exec 13</dev/null\n\\exec 14</dev/null\n\\exec 15</dev/null\n\\exec 16</dev/null\n\\exec 17</dev/null\n\\exec 18</dev/null"

var bufPool = sync.Pool{New: func() any { b := make([]byte, readBufferSize); return &b }}

// shellSession is one long-lived bash process. It runs one command at a time;
// the executor's pool guarantees exclusive use.
type shellSession struct {
	cfg ShellConfig
	// ownEnv is what this shell got at start beyond its config (a
	// sandbox's own TMPDIR): like shell.env, the session state neither
	// records it nor carries it to other shells.
	ownEnv map[string]string
	key    string
	guard  *guard.Process // the shell's guardian: ends every process of the session
	pid    int            // bash's
	ctl    *os.File
	status chan string
	done   chan struct{} // closed once the shell has exited (or its guardian is gone)
	exit   int           // exit status of the shell, valid after done
	dir    string
	marker []byte
	// ctlLink is what /proc/<pid>/fd/0 reads while bash waits for its next
	// request on the control socket: the watchdog's sign of an idle shell.
	ctlLink string
	st      *os.File // agentsh's end of the status socket
	// aliases re-points, in the next run, the fds that a command made
	// copies of its output (`exec 3>&1`), as "3>&19 5>&19".
	aliases string
	// state, stateVer and stateView: the session state this shell holds,
	// as of which capture and in which view (so a shell that is behind
	// gets it applied first); base is the user's layer it applied, which a
	// ModelView capture diffs against.
	state     *SessionState
	stateVer  uint64
	stateView StateView
	base      *layer
	// optNames are this bash's option names, from its first full dump.
	optNames optionNames

	mu        sync.Mutex
	lingering []*os.File // FIFOs of finished runs still held open by background jobs
	closed    bool
	broken    atomic.Bool

	// Terminal stdin (spec §2.1): commands read a pseudo-terminal held
	// here, which bash makes its controlling terminal when it first opens
	// it, so a prompt waits (and /dev/tty works) instead of reading EOF.
	ptm      *os.File // the master; nil = stdin is /dev/null
	pts      *os.File // the slave, kept open so the master never reads EIO
	ttyPath  string
	ttyModes *unix.Termios                // the modes at start, restored before a run when a program changed them
	ttyOut   atomic.Pointer[syncWriter]   // the running command's output, for what the terminal echoes or programs write to /dev/tty
	ttyView  atomic.Pointer[TerminalView] // the running command's screen, when it runs with its output on the terminal
	// ttyEnd scans the terminal's output for the run's end mark: the
	// view's while the UI shows the run, kept when the run becomes a job
	// (the UI lets go of the screen, but the job's last output must still
	// be read before the run ends).
	ttyEnd   atomic.Pointer[TerminalView]
	lastOut  atomic.Int64 // UnixNano of the running command's latest output
	ttyDirty atomic.Bool  // keys were typed or a program was answered: flush the input before the next run
	// echoDue is set (a UnixNano deadline) when input was typed: the
	// program's answer waits for the terminal's echo of it until then, so
	// the output reads "y", then "got y", as on a screen.
	echoDue atomic.Int64

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

// removeScratch removes a state file and its scratch files (.e, .f), so
// that bash writes them anew: rewriting a file through truncation makes
// ext4 flush it at close (auto_da_alloc), which cost a capture 0.4 ms per
// file when the engine folder is on a disk.
func removeScratch(path string) {
	for _, p := range []string{path, path + ".e", path + ".f"} {
		_ = os.Remove(p)
	}
}

// writeNew writes a new file of the engine's (never one that is there
// already, nor through a symlink), readable by the user only.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// shellQuote quotes s as one bash word.
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

// runtimePrefix names the shells' runtime folders in the engine folder.
const runtimePrefix = "sh-"

// copySnapshot copies cfg's rc snapshot, checked to be what agentsh took,
// into dir (a shell's or a program's own folder: a confined view has
// nothing else of the engine folder) and returns the copy's path; "" when
// there is no snapshot or it does not check.
func copySnapshot(cfg ShellConfig, dir string) (string, error) {
	if cfg.SnapshotPath == "" {
		return "", nil
	}
	rc := snapshotContent(cfg.SnapshotPath)
	if rc == nil {
		return "", nil
	}
	rcPath := filepath.Join(dir, "rc")
	if err := writeNew(rcPath, rc); err != nil {
		return "", err
	}
	return rcPath, nil
}

// startSession starts bash in its own session and process group, below a
// guardian (internal/guard), and waits until it has sourced the snapshot and
// defined the protocol functions.
func startSession(cfg ShellConfig, key, cwd string, grace time.Duration) (*shellSession, error) {
	// The engine folder is this process's, 0700, outside every writable
	// root; a sandbox's view binds back only this shell's own folder.
	engine, err := guard.EngineDir()
	if err != nil {
		return nil, fmt.Errorf("start shell: %w", err)
	}
	dir, err := os.MkdirTemp(engine, runtimePrefix)
	if err != nil {
		return nil, fmt.Errorf("start shell: %w", err)
	}
	s := &shellSession{cfg: cfg, key: key, dir: dir,
		status: make(chan string, 8), done: make(chan struct{})}
	s.marker = []byte(markerVar + "=" + randomHex(8))
	fail := func(err error) (*shellSession, error) {
		s.closeTerminal()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start shell: %w", err)
	}
	if cfg.TerminalStdin {
		if err := s.openTerminal(); err != nil {
			return fail(err)
		}
	}
	// The snapshot is sourced from a copy in the shell's own folder, of
	// content checked to be what agentsh took (a confined shell's view
	// has nothing else of the engine folder).
	snap := ""
	if rcPath, err := copySnapshot(cfg, dir); err != nil {
		return fail(err)
	} else if rcPath != "" {
		snap = `\builtin . ` + shellQuote(rcPath) + ` >/dev/null 2>&1 </dev/null`
	}
	if s.ttyPath != "" {
		// Opening the terminal once makes it bash's controlling terminal
		// now, not at the first run's redirection: ctrl+c typed the moment
		// a command starts must already reach it.
		snap = `: <` + shellQuote(s.ttyPath) + "\n" + snap
	}
	initPath := filepath.Join(dir, "init")
	alias := requestAliasFor(s.ttyPath)
	initText := fmt.Appendf(nil, initScript, placeholderFds, shellQuote(dir), snap, alias, alias, alias)
	if err := writeNew(initPath, initText); err != nil {
		return fail(err)
	}
	// Socketpairs, not pipes: open(2) of /proc/<pid>/fd/N fails on a
	// socket, so no process can reach either channel by path.
	ctlW, ctlR, err := socketPair()
	if err != nil {
		return fail(err)
	}
	stR, stW, err := socketPair()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return fail(err)
	}
	// A read of the status fd by a command sees EOF; what a command writes
	// into its saved control fd is read and dropped (discardControl), so it
	// neither piles up nor kills the shell with SIGPIPE.
	_ = shutdownFile(stR, syscall.SHUT_WR)
	if st, err := ctlR.Stat(); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			s.ctlLink = "socket:[" + strconv.FormatUint(sys.Ino, 10) + "]"
		}
	}
	_ = cwd // the first run cds itself; a missing dir must not fail the start
	// A sandbox whose temp directory holds a denied folder cannot make
	// new entries there: the shell gets a temp folder of its own.
	env := map[string]string{markerVar: string(s.marker[len(markerVar)+1:])}
	writable, cleanup := []string{dir}, []string{dir}
	if cfg.Sandbox.NeedsOwnTemp() {
		if tmp, err := os.MkdirTemp("", "agentsh-sandbox-tmp-"); err == nil {
			env["TMPDIR"] = tmp
			s.ownEnv = map[string]string{"TMPDIR": tmp}
			writable, cleanup = append(writable, tmp), append(cleanup, tmp)
		}
	}
	own := writable
	if s.ttyPath != "" {
		own = append(own[:len(own):len(own)], s.ttyPath) // its own terminal stays in its view
	}
	sb, err := guardSandbox(cfg.Sandbox, own...)
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		stR.Close()
		stW.Close()
		return fail(err)
	}
	g, err := guard.Start(guard.Cmd{
		Path: cfg.Path,
		Args: []string{filepath.Base(cfg.Path), "--noprofile", "--norc"}, // messages read "bash: …" as in a terminal
		Env:  cfg.env(env),
		// stdin is the control socket, fd 3 the status socket.
		Files:   []*os.File{ctlR, nil, nil, stW},
		Setsid:  true,
		Marker:  s.marker,
		Grace:   grace,
		Cleanup: cleanup,
		Sandbox: sb,
	})
	if sb != nil && sb.Ruleset != nil {
		sb.Ruleset.Close()
	}
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return fail(err)
	}
	s.guard, s.pid, s.ctl = g, g.Pid(), ctlW
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
	s.st = stR
	go s.readStatus(stR)
	go discardControl(ctlW)
	// What is sourced is checked before it is sourced.
	if got, err := readOwnFile(initPath); err != nil || !bytes.Equal(got, initText) {
		s.close()
		return nil, fmt.Errorf("start shell: %s changed before the shell read it", initPath)
	}
	if _, err := io.WriteString(ctlW, `\builtin . `+shellQuote(initPath)+"\n"); err != nil {
		// Its input closed: the shell is gone already (dash, zsh and fish
		// refuse bash's options at once), which says more than the pipe.
		select {
		case <-s.done:
			err = errNeedsBash(cfg.Path)
		case <-time.After(startTimeout):
			err = fmt.Errorf("start shell: %w", err)
		}
		s.close()
		return nil, err
	}
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case line, ok := <-s.status:
		if ok && strings.HasPrefix(line, "R ") {
			return s, nil
		}
		s.close()
		return nil, errNeedsBash(cfg.Path)
	case <-timer.C:
		s.close()
		return nil, fmt.Errorf("start shell: %s did not become ready within %v", cfg.Path, startTimeout)
	}
}

// exited reports whether the shell process is gone (`exit 3`, `exec`'d
// program ended): no epilogue will write its end mark to the terminal, and
// what it printed is already in the terminal for drainTerminal.
func (s *shellSession) exited() bool {
	select {
	case <-s.done:
		return true
	default:
		return false
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
	if s.st != nil {
		s.st.Close() // a forked subshell may still hold the shell's end
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
	s.closeTerminal()
	os.RemoveAll(s.dir)
}

// openTerminal makes the shell's terminal and starts forwarding what it
// prints (echo of typed input, prompts written to /dev/tty) to the running
// command's output.
func (s *shellSession) openTerminal() error {
	ptm, pts, err := cpty.Open()
	if err != nil {
		return fmt.Errorf("open terminal: %w", err)
	}
	// creack/pty's helpers go through Fd(), which would make the master
	// blocking: a read could then not be ended by Close.
	err = pty.Control(ptm, func(fd int) error {
		if err := unix.IoctlSetWinsize(fd, unix.TIOCSWINSZ, &unix.Winsize{Row: DefaultPTYRows, Col: DefaultPTYCols}); err != nil {
			return err
		}
		return unix.SetNonblock(fd, true)
	})
	var modes *unix.Termios
	if err == nil {
		err = pty.Control(pts, func(fd int) error {
			var gerr error
			modes, gerr = unix.IoctlGetTermios(fd, unix.TCGETS)
			return gerr
		})
	}
	if err != nil {
		ptm.Close()
		pts.Close()
		return fmt.Errorf("set up terminal: %w", err)
	}
	s.ptm, s.pts, s.ttyPath, s.ttyModes = ptm, pts, pts.Name(), modes
	go s.readTerminal(ptm)
	return nil
}

func (s *shellSession) closeTerminal() {
	if s.ptm != nil {
		s.ptm.Close()
		s.pts.Close()
	}
}

// readTerminal forwards the terminal's output to the running command's
// output until the master is closed; between runs it is dropped.
func (s *shellSession) readTerminal(ptm *os.File) {
	buf := make([]byte, 32<<10)
	for {
		n, err := ptm.Read(buf)
		if n > 0 {
			v := s.ttyView.Load()
			if v != nil {
				v.feed(buf[:n]) // raw: the screen needs the escape sequences
			}
			if w := s.ttyOut.Load(); w != nil {
				s.lastOut.Store(time.Now().UnixNano())
				_, _ = w.Write(buf[:n])
			}
			if e := s.ttyEnd.Load(); e != nil {
				e.scanEnd(buf[:n]) // after the write: the run may end at once
			}
			s.echoDue.Store(0)
		}
		if err != nil {
			if errors.Is(err, syscall.EIO) || errors.Is(err, syscall.EAGAIN) {
				time.Sleep(lingerPause) // every slave closed for a moment; ours comes back
				continue
			}
			return
		}
	}
}

// resetTerminal readies the terminal for a run: input left from an earlier
// one (keys typed into a program that ended, a terminal's late answer to a
// query) is discarded, and modes a program left changed (raw mode after a
// crash) are restored. One ioctl when nothing changed.
func (s *shellSession) resetTerminal() {
	_ = pty.Control(s.pts, func(fd int) error {
		if s.ttyDirty.Swap(false) {
			_ = unix.IoctlSetInt(fd, unix.TCFLSH, unix.TCIFLUSH)
		}
		if cur, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil && *cur != *s.ttyModes {
			_ = unix.IoctlSetTermios(fd, unix.TCSETS, s.ttyModes)
		}
		return nil
	})
}

// syncWriter serializes the two writers of a run's output on a shell with
// a terminal: the FIFO's reader and the terminal's.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.w.Write(p)
}

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

// socketPair returns two connected stream sockets, close-on-exec in agentsh:
// ours is non-blocking (on the netpoller, so Close ends a pending read),
// the shell's blocking.
func socketPair() (ours, shells *os.File, err error) {
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	if err := syscall.SetNonblock(fds[0], true); err != nil {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	return os.NewFile(uintptr(fds[0]), "agentsh-sock"), os.NewFile(uintptr(fds[1]), "agentsh-sock"), nil
}

func shutdownFile(f *os.File, how int) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) { serr = syscall.Shutdown(int(fd), how) }); err != nil {
		return err
	}
	return serr
}

// maxStatusLine bounds what is kept of one status line: a command that
// floods the shell's saved status fd costs no memory, and a real status
// line glued to garbage is still found at the end.
const maxStatusLine = 256

// readStatus forwards the shell's status lines to s.status until EOF.
func (s *shellSession) readStatus(r io.ReadCloser) {
	br := bufio.NewReaderSize(r, 4096)
	var long []byte
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, frag...)
			if len(long) > maxStatusLine {
				long = append(long[:0], long[len(long)-maxStatusLine:]...)
			}
			continue
		}
		if len(frag) > 0 && frag[len(frag)-1] == '\n' {
			line := frag[:len(frag)-1]
			if len(long) > 0 {
				line = append(long, line...)
				long = long[:0]
			}
			if len(line) > maxStatusLine {
				line = line[len(line)-maxStatusLine:]
			}
			s.status <- string(line)
		}
		if err != nil {
			break
		}
	}
	r.Close()
	close(s.status)
}

// discardControl reads and drops what a command writes into the shell's
// control socket, at a bounded pace; it ends when the session closes it.
func discardControl(f *os.File) {
	b := make([]byte, 4096)
	for {
		if _, err := f.Read(b); err != nil {
			return
		}
		time.Sleep(lingerPause)
	}
}

// newNonces returns two random tokens of nonceLen letters and digits
// (~59 bits each) from one read of the system's random source.
func newNonces() (string, string) {
	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
	var b [2 * nonceLen]byte
	_, _ = rand.Read(b[:])
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b[:nonceLen]), string(b[nonceLen:])
}

// startLine reports whether line is the start acknowledgement (or the FIFO
// failure, fail=true) carrying nonce; garbage a command glued in front of it
// does not hide it.
func startLine(line, nonce string) (ok, fail bool) {
	i := strings.LastIndex(line, nonce)
	if i < 2 || i+len(nonce) != len(line) || line[i-1] != ' ' {
		return false, false
	}
	switch line[i-2] {
	case 'S':
		return true, false
	case 'F':
		return true, true
	}
	return false, false
}

// endLine parses "E <nonce> <code>" at the end of line.
func endLine(line, nonce string) (int, bool) {
	i := strings.LastIndex(line, "E "+nonce+" ")
	if i < 0 {
		return 0, false
	}
	code, err := strconv.Atoi(line[i+len(nonce)+3:])
	if err != nil {
		return 0, false
	}
	return code, true
}

// pendingStatus waits up to wait for a status line that match accepts;
// other lines are skipped.
func (s *shellSession) pendingStatus(match func(string) bool, wait time.Duration) (string, bool) {
	t := time.NewTimer(wait)
	defer t.Stop()
	for {
		select {
		case line, ok := <-s.status:
			if !ok {
				return "", false
			}
			if match(line) {
				return line, true
			}
		case <-t.C:
			return "", false
		}
	}
}

// ackWait is what the kernel says of a shell that has not acknowledged a
// request yet.
type ackWait int

const (
	ackBusy     ackWait = iota // running, runnable, or asleep for another reason: slow, not dead
	ackIdle                    // back at its control socket: the prologue did not run
	ackStopped                 // stopped (SIGSTOP): nothing of agentsh's continues it
	ackDead                    // a zombie, or gone
	ackSpinning                // it used ackSpinCPU of CPU time without getting there: a loop (a RETURN trap that returns)
)

// ackSpinCPU is the CPU time a shell may use between a request and its
// acknowledgement, in clock ticks: the prologue takes well under a
// millisecond, so this is only reached by a shell looping forever, never
// by a slow machine (CPU time, unlike a clock, does not pass while the
// shell waits for a core).
const ackSpinCPU = proc.TicksPerSecond / 2

func (w ackWait) String() string {
	switch w {
	case ackIdle:
		return "it went back to reading its input without running it"
	case ackStopped:
		return "it is stopped"
	case ackDead:
		return "it exited"
	case ackSpinning:
		return "it is looping"
	}
	return "it is busy"
}

// ackState tells a shell that will not acknowledge a request (idle,
// stopped, dead, looping) from one that is only slow; a tracer's stop (t)
// is slow. cpu0 is the shell's CPU time at the first look.
func (s *shellSession) ackState(cpu0 uint64) ackWait {
	if s.exited() {
		return ackDead
	}
	st, ok := proc.Stat(s.pid)
	switch {
	case !ok || st.State == 'Z' || st.State == 'X':
		return ackDead
	case st.State == 'T':
		return ackStopped
	case st.CPU >= cpu0+ackSpinCPU:
		return ackSpinning
	case s.idle():
		return ackIdle
	}
	return ackBusy
}

// idle reports whether the shell is blocked reading its control socket
// (it finished the request line without reporting) or stopped (kill -STOP
// $$): either way no status line will come.
func (s *shellSession) idle() bool {
	st, ok := proc.Stat(s.pid)
	if !ok {
		return false
	}
	if st.State == 'T' {
		return true // a tracer's stop (t) ends by itself
	}
	// Asleep (not woken by bytes still to read) waiting to read the
	// control socket.
	if st.State != 'S' || s.ctlLink == "" {
		return false
	}
	if proc.WaitingToRead(s.pid, s.ctlLink) {
		return true
	}
	// Or reading another stdin while it holds no descriptor of its
	// control socket at all: a command closed the copy bash restores its
	// input from, so no request can ever reach it again (the epilogue
	// exits such a shell; this finds one whose exit was disabled too).
	return s.readingLostInput()
}

// readingLostInput reports whether bash sleeps reading its fd 0 and holds
// no descriptor of its control socket.
func (s *shellSession) readingLostInput() bool {
	dir := "/proc/" + strconv.Itoa(s.pid) + "/fd/"
	in, err := os.Readlink(dir + "0")
	if err != nil || in == s.ctlLink || !proc.WaitingToRead(s.pid, in) {
		return false
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		if l, err := os.Readlink(dir + e.Name()); err == nil && l == s.ctlLink {
			return false
		}
	}
	return true
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

// awaitEcho holds the command's output until the terminal's reader has
// passed on the echo of typed input, or the deadline passes (no echo: a
// password prompt).
func (s *shellSession) awaitEcho(due int64) {
	for s.echoDue.Load() != 0 && time.Now().UnixNano() < due {
		time.Sleep(200 * time.Microsecond)
	}
	s.echoDue.Store(0)
}

// drainTerminal lets the terminal's reader take what the terminal still
// holds (the echo of input typed just before the command ended), for at
// most terminalDrain; one ioctl when there is nothing. A run whose output
// went to the terminal has already waited for its end mark.
func (s *shellSession) drainTerminal() {
	deadline := time.Now().Add(terminalDrain)
	for {
		n := 0
		_ = pty.Control(s.ptm, func(fd int) error {
			v, err := unix.IoctlGetInt(fd, unix.TIOCINQ)
			n = v
			return err
		})
		if n <= 0 || time.Now().After(deadline) {
			return
		}
		time.Sleep(time.Millisecond)
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

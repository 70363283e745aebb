package bash

import (
	"agentsh/internal/proc"
	"bufio"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
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
	markerVar    = "AGENTSH_SHELL_MARK"
	requestAlias = "__ar"
	statusGrace  = 200 * time.Millisecond // for a status line still in flight when the shell died
	nonceLen     = 10
	// idleFirst and idleEvery pace the watchdog that finds a shell which
	// stopped answering: a run that ends normally never reaches it.
	ackIdleEvery = 20 * time.Millisecond
	idleFirst    = 50 * time.Millisecond
	idleGrace    = 20 * time.Millisecond  // for an end line already written when the shell is found idle
	idleConfirm  = 100 * time.Millisecond // between the two looks that find the shell idle
	ackIdleGrace = 250 * time.Millisecond // for a start line in flight when the shell is found idle
	idleEvery    = 200 * time.Millisecond
)

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

package bash

import (
	"agentsh/internal/guard"
	"crypto/rand"
	"encoding/hex"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"golang.org/x/sys/unix"
)

// ResetNotice is the first line of a run whose command broke the shell: the
// output so far is kept, the exit status is unknown, and the next run gets a
// fresh shell.
const ResetNotice = "Shell reset: the command broke the shell's control protocol, so its exit status is unknown; the next command runs in a fresh shell"

// LingerNotice is added when background processes of a run still write to
// its output after the drain window.
const LingerNotice = "A background process is still writing to this output; what it writes from now on is discarded (to keep it, redirect it: cmd > file 2>&1 &)"

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

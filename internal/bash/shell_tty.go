package bash

import (
	"agentsh/internal/pty"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"syscall"
	"time"

	cpty "github.com/creack/pty"
	"golang.org/x/sys/unix"
)

const (
	// terminalDrain bounds the wait for the terminal's last output at the
	// end of a run.
	terminalDrain = 50 * time.Millisecond
	// terminalEndWait bounds the wait for the end mark of a run whose
	// output went to the terminal.
	terminalEndWait = 10 * time.Second
)

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

package proc

import (
	"fmt"
	"path/filepath"
	"syscall"

	cpty "github.com/creack/pty"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"agentsh/internal/testkit"
)

// TestDescendantsAndWaitingToRead: a shell's pipeline is found below
// it, and only the stage sleeping in read(2) on our pipe (cat) counts as
// reading it; the shell (wait4) and sleep do not.
func TestDescendantsAndWaitingToRead(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	cmd := exec.Command(bash, "-c", "cat | sleep 30; true")
	cmd.Stdin = r
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	link, err := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(r.Fd())))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := Descendants(cmd.Process.Pid); !ok {
		t.Skip("the kernel has no /proc/<pid>/task/<tid>/children")
	}
	var pids []int
	testkit.Eventually(t, 30*time.Second, "bash, sleep and a cat reading stdin", func() (bool, string) {
		pids, _ = Descendants(cmd.Process.Pid)
		return len(pids) == 3 && slices.ContainsFunc(pids, func(p int) bool { return WaitingToRead(p, link) }), fmt.Sprintf("descendants %v", pids)
	})
	if pids[0] != cmd.Process.Pid {
		t.Errorf("Descendants = %v, want the root first", pids)
	}
	readers := 0
	for _, p := range pids {
		if WaitingToRead(p, link) {
			readers++
		}
		if WaitingToRead(p, "/dev/null") {
			t.Errorf("process %d reads /dev/null", p)
		}
	}
	if readers != 1 {
		t.Errorf("%d processes read the pipe, want 1 (cat)", readers)
	}
}

// TestWaitingToReadMultiplexed: a program waiting in select, poll or epoll
// with a pipe among the files it reads waits to read that pipe; one that
// waits on another pipe, on ours for writing only, or on nothing, does not.
func TestWaitingToReadMultiplexed(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: it makes the select, poll and epoll calls")
	}
	for name, c := range map[string]struct {
		code    string
		reading bool
	}{
		"select":       {"import select,sys; select.select([sys.stdin],[],[])", true},
		"poll":         {"import select,sys; p=select.poll(); p.register(sys.stdin, select.POLLIN); p.poll()", true},
		"epoll":        {"import select,sys; e=select.epoll(); e.register(sys.stdin.fileno(), select.EPOLLIN); e.poll()", true},
		"select-other": {"import os,select; r,w=os.pipe(); select.select([r],[],[])", false},
		"select-write": {"import select,sys; select.select([],[sys.stdin],[])", false},
		"select-none":  {"import select; select.select([],[],[],60)", false},
	} {
		t.Run(name, func(t *testing.T) {
			r, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			defer w.Close()
			// The program makes the file ready before its last call, with
			// every module it uses already imported: a wait after that is
			// the last call's.
			ready := filepath.Join(t.TempDir(), "ready")
			cmd := exec.Command(py, "-c", "import os,select,sys; open(sys.argv[1],'w').close(); "+c.code, ready)
			cmd.Stdin = r
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
			link, _ := os.Readlink("/proc/self/fd/" + strconv.Itoa(int(r.Fd())))
			pid := cmd.Process.Pid
			// Wait until the program sleeps in its last call (the interpreter
			// starts with reads of its own files).
			testkit.Eventually(t, 30*time.Second, "the program to settle in its last call", func() (bool, string) {
				if WaitingToRead(pid, link) {
					return true, ""
				}
				_, err := os.Stat(ready)
				st, ok := Stat(pid)
				call, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
				return err == nil && ok && st.State == 'S' && sleepsIn(pid) && !c.reading,
					fmt.Sprintf("ready file: %v; state %q; syscall %q", err, st.State, call)
			})
			if got := WaitingToRead(pid, link); got != c.reading {
				t.Errorf("WaitingToRead = %v, want %v", got, c.reading)
			}
		})
	}
}

// sleepsIn reports whether pid sleeps in a call that waits for files (not
// starting up in an open or mmap).
func sleepsIn(pid int) bool {
	b, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return false
	}
	nr, _ := strconv.Atoi(f[0])
	c, known := waitCalls[nr]
	return known && c != callRead
}

// TestWaitingToReadDevTTY: a program that reads /dev/tty (ssh's host key
// question, sudo's password prompt) waits to read its controlling
// terminal's path; on another terminal, or with no controlling terminal,
// it does not.
func TestWaitingToReadDevTTY(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	master, tty, err := cpty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	_, other, err := cpty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	defer other.Close()
	cmd := exec.Command(bash, "--norc", "-c", "read -r line </dev/tty")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = tty, tty, tty
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	pid := cmd.Process.Pid
	testkit.Eventually(t, 30*time.Second, "bash to wait to read /dev/tty as "+tty.Name(), func() (bool, string) {
		call, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/syscall")
		return WaitingToRead(pid, tty.Name()), fmt.Sprintf("syscall %q", call)
	})
	if l, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/0"); l != "/dev/tty" {
		t.Fatalf("bash reads %q, not /dev/tty", l)
	}
	if WaitingToRead(pid, other.Name()) {
		t.Errorf("reading /dev/tty counted as reading %s, another terminal", other.Name())
	}
}

// TestStatCPU: the CPU time Stat reports grows by what the process burns
// (the engine tells a spinning shell from a slow one by it).
func TestStatCPU(t *testing.T) {
	before, ok := Stat(os.Getpid())
	if !ok {
		t.Fatal("no stat for this process")
	}
	deadline := time.Now().Add(60 * time.Second) // hang guard: a second of CPU on the busiest machine
	x := 0
	for {
		for i := 0; i < 1_000_000; i++ {
			x += i
		}
		now, _ := Stat(os.Getpid())
		if now.CPU >= before.CPU+TicksPerSecond/2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("CPU stayed at %d ticks (from %d) after a minute of busy loop (%d)", now.CPU, before.CPU, x)
		}
	}
}

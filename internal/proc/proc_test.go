package proc

import (
	"os"
	"os/exec"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestDescendantsAndBlockedReadingFile: a shell's pipeline is found below
// it, and only the stage sleeping in read(2) on our pipe (cat) counts as
// reading it; the shell (wait4) and sleep do not.
func TestDescendantsAndBlockedReadingFile(t *testing.T) {
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
	var pids []int
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		var ok bool
		if pids, ok = Descendants(cmd.Process.Pid); !ok {
			t.Skip("the kernel has no /proc/<pid>/task/<tid>/children")
		}
		if len(pids) == 3 && slices.ContainsFunc(pids, func(p int) bool { return BlockedReadingFile(p, link) }) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("descendants %v never became bash, sleep and a cat reading stdin (hang guard)", pids)
		}
	}
	if pids[0] != cmd.Process.Pid {
		t.Errorf("Descendants = %v, want the root first", pids)
	}
	readers := 0
	for _, p := range pids {
		if BlockedReadingFile(p, link) {
			readers++
		}
		if BlockedReadingFile(p, "/dev/null") {
			t.Errorf("process %d reads /dev/null", p)
		}
	}
	if readers != 1 {
		t.Errorf("%d processes read the pipe, want 1 (cat)", readers)
	}
}

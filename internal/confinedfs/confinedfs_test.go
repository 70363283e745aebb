package confinedfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"agentsh/internal/proctest"
	"agentsh/internal/sandbox"
	"agentsh/internal/testkit"
)

func needLandlock(t testing.TB) {
	t.Helper()
	if sandbox.Detect().Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
}

// outsidePath is a path outside every writable root of a workspace-write
// policy that this process may create: /var/tmp unless it is the temp
// directory.
func outsidePath(t testing.TB) string {
	t.Helper()
	dir := "/var/tmp"
	if st, err := os.Stat(dir); err != nil || !st.IsDir() || filepath.Clean(os.TempDir()) == dir {
		t.Skip("no /var/tmp outside the temp directory")
	}
	p := filepath.Join(dir, "agentsh-confinedfs-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	t.Cleanup(func() { os.Remove(p) })
	return p
}

// noHelperLeft stops every helper and checks that none of their processes
// (nor their guardians) is alive.
func noHelperLeft(t *testing.T) {
	t.Helper()
	marks := Markers()
	StopAll()
	for _, m := range marks {
		if pids := proctest.Marked(m); len(pids) > 0 {
			t.Errorf("helper processes left after StopAll: %v (%s)", pids, m)
		}
	}
}

// TestConfinedOps: under workspace-write the helper creates, writes,
// renames and removes inside the workdir, and the kernel refuses creating
// outside it (a Refusal naming the path, a permission error for the
// tools); reading a denyRead file is refused; nothing is left running.
func TestConfinedOps(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	home := t.TempDir()
	ssh := filepath.Join(home, ".ssh")
	if err := os.MkdirAll(ssh, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(ssh, "id_rsa"), []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := New(&sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work, DenyRead: []string{ssh}})
	defer noHelperLeft(t)

	if err := f.MkdirAll(filepath.Join(work, "a", "b"), 0o755); err != nil {
		t.Fatalf("MkdirAll inside: %v", err)
	}
	tmp, err := f.CreateTemp(filepath.Join(work, "a", "b"), ".x.tmp-")
	if err != nil {
		t.Fatalf("CreateTemp inside: %v", err)
	}
	if _, err := tmp.WriteString("hello"); err != nil {
		t.Fatal(err)
	}
	tmp.Close()
	dst := filepath.Join(work, "a", "b", "x.txt")
	if err := f.Rename(tmp.Name(), dst); err != nil {
		t.Fatalf("Rename inside: %v", err)
	}
	if b, err := os.ReadFile(dst); err != nil || string(b) != "hello" {
		t.Fatalf("written file: %q, %v", b, err)
	}
	fi, err := f.Stat(dst)
	if err != nil || fi.Size() != 5 || !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o600 {
		t.Fatalf("Stat: %v %v", fi, err)
	}
	des, err := f.ReadDir(filepath.Join(work, "a", "b"))
	if err != nil || len(des) != 1 || des[0].Name() != "x.txt" {
		t.Fatalf("ReadDir: %v %v", des, err)
	}

	out := outsidePath(t)
	_, err = f.OpenFile(out, os.O_WRONLY|os.O_CREATE, 0o644)
	var r *Refusal
	if !errors.As(err, &r) || !errors.Is(err, fs.ErrPermission) || r.Denial.Kind != sandbox.DeniedWrite || r.Denial.Path != out {
		t.Fatalf("creating %s outside: err %v (refusal %+v)", out, err, r)
	}
	if _, err := os.Stat(out); err == nil {
		t.Fatalf("%s was created", out)
	}
	_, err = f.Open(filepath.Join(ssh, "id_rsa"))
	if !errors.As(err, &r) || r.Denial.Kind != sandbox.DeniedRead {
		t.Fatalf("reading the denied key: err %v", err)
	}
}

// TestHelperRestarts: a helper that was killed is replaced at the next call.
func TestHelperRestarts(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	f := New(&sandbox.Policy{Mode: sandbox.ReadOnly, Workdir: work})
	defer noHelperLeft(t)
	if _, err := f.Stat(work); err != nil {
		t.Fatal(err)
	}
	h, err := f.get()
	if err != nil {
		t.Fatal(err)
	}
	if err := syscallKill(h.proc.Pid()); err != nil {
		t.Fatal(err)
	}
	<-h.proc.Exited()
	if _, err := f.Stat(work); err != nil {
		t.Fatalf("after the helper was killed: %v", err)
	}
	if h2, _ := f.get(); h2 == h {
		t.Fatal("the dead helper was kept")
	}
	if pids := proctest.Marked(h.marker); len(pids) > 0 {
		t.Errorf("the killed helper's processes are left: %v", pids)
	}
}

func syscallKill(pid int) error { return syscall.Kill(pid, syscall.SIGKILL) }

// BenchmarkRoundTrip is one Stat through the helper: the cost each
// operation adds.
func BenchmarkRoundTrip(b *testing.B) {
	needLandlock(b)
	dir := b.TempDir()
	f := New(&sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: dir})
	b.Cleanup(StopAll)
	if _, err := f.Stat(dir); err != nil {
		b.Fatal(err)
	}
	b.Run("stat", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.Stat(dir); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			fd, err := f.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			fd.Close()
		}
	})
	b.Run("host-open", func(b *testing.B) {
		for b.Loop() {
			fd, err := os.Open(dir)
			if err != nil {
				b.Fatal(err)
			}
			fd.Close()
		}
	})
}

// TestOpenBatch: a batch opens what the policy lets it read, and refuses
// (a Refusal) what it denies or reports what is missing, name by name,
// across more names than one answer carries.
func TestOpenBatch(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	deny := filepath.Join(work, "denied.txt")
	var names []string
	for i := range 150 {
		n := "f" + strconv.Itoa(i) + ".txt"
		names = append(names, n)
		if err := os.WriteFile(filepath.Join(work, n), []byte(strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(deny, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	names = append(names, "denied.txt", "missing.txt")
	f := New(&sandbox.Policy{Mode: sandbox.ReadOnly, Workdir: work, DenyRead: []string{deny}})
	defer noHelperLeft(t)
	files, errs := f.OpenBatch(work, names)
	for i := range 150 {
		if errs[i] != nil || files[i] == nil {
			t.Fatalf("%s: %v", names[i], errs[i])
		}
		b := make([]byte, 8)
		n, _ := files[i].Read(b)
		files[i].Close()
		if string(b[:n]) != strconv.Itoa(i) {
			t.Errorf("%s holds %q", names[i], b[:n])
		}
	}
	var r *Refusal
	if files[150] != nil || !errors.As(errs[150], &r) || r.Denial.Kind != sandbox.DeniedRead {
		t.Errorf("denied.txt: %v", errs[150])
	}
	if files[151] != nil || !errors.Is(errs[151], fs.ErrNotExist) {
		t.Errorf("missing.txt: %v", errs[151])
	}
}

// TestConcurrentCalls: more callers than connections share one helper;
// every answer goes to its own caller, and a StopAll in the middle fails
// the calls in flight cleanly (a new helper serves the next ones).
func TestConcurrentCalls(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	for i := range 16 {
		if err := os.WriteFile(filepath.Join(work, strconv.Itoa(i)), []byte(strconv.Itoa(i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := New(&sandbox.Policy{Mode: sandbox.ReadOnly, Workdir: work})
	defer noHelperLeft(t)
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := filepath.Join(work, strconv.Itoa(i))
			for range 200 {
				fi, err := f.Stat(p)
				if err != nil || fi.Size() != int64(len(strconv.Itoa(i))) {
					errs <- fmt.Errorf("stat %s: %v %v", p, fi, err)
					return
				}
				fd, err := f.Open(p)
				if err != nil {
					errs <- err
					return
				}
				b := make([]byte, 4)
				n, _ := fd.Read(b)
				fd.Close()
				if string(b[:n]) != strconv.Itoa(i) {
					errs <- fmt.Errorf("%s read %q", p, b[:n])
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Calls racing a stop either succeed or fail with an error; none hangs.
	done := make(chan struct{})
	go func() {
		defer close(done)
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for range 100 {
					_, _ = f.Stat(work)
				}
			}()
		}
		StopAll()
		wg.Wait()
	}()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("calls racing StopAll hang")
	}
	if _, err := f.Stat(work); err != nil {
		t.Errorf("after StopAll: %v", err)
	}
}

// TestIdleHelperStops: a helper unused for idleAfter is stopped, with its
// guardian; the next call starts a new one.
func TestIdleHelperStops(t *testing.T) {
	needLandlock(t)
	old := idleAfter
	idleAfter = 200 * time.Millisecond
	t.Cleanup(func() { idleAfter = old })
	work := t.TempDir()
	f := New(&sandbox.Policy{Mode: sandbox.ReadOnly, Workdir: work})
	defer noHelperLeft(t)
	if _, err := f.Stat(work); err != nil {
		t.Fatal(err)
	}
	marks := Markers()
	if len(marks) != 1 {
		t.Fatalf("helpers %v", marks)
	}
	testkit.Eventually(t, 0, "the idle helper to stop", func() (bool, string) {
		pids, helpers := proctest.Marked(marks[0]), Markers()
		return len(pids) == 0 && len(helpers) == 0, fmt.Sprintf("processes %v, helpers %v", pids, helpers)
	})
	if _, err := f.Stat(work); err != nil {
		t.Fatalf("after the idle stop: %v", err)
	}
	if m := Markers(); len(m) != 1 || m[0] == marks[0] {
		t.Errorf("helpers after the idle stop: %v (was %v)", m, marks)
	}
}

// TestOpenOnlyFiles: an open lands only on a regular file or a folder. A
// FIFO a confined job holds open for writing (swapped in after the tool's
// stat said "a file") would hang agentsh's read forever, a link to
// /dev/zero would fill its memory: both are refused, at once; a FIFO asked
// for non-blocking still opens.
func TestOpenOnlyFiles(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	fifo := filepath.Join(work, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	// A writer that never writes (O_RDWR does not wait for a reader).
	w, err := os.OpenFile(fifo, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := os.Symlink("/dev/zero", filepath.Join(work, "zero")); err != nil {
		t.Fatal(err)
	}
	f := New(&sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work})
	defer noHelperLeft(t)
	done := make(chan string, 1)
	go func() {
		var out []string
		for _, name := range []string{"fifo", "zero"} {
			g, err := f.Open(filepath.Join(work, name))
			if err == nil {
				g.Close()
				out = append(out, name+": opened")
				continue
			}
			out = append(out, name+": "+err.Error())
		}
		files, errs := f.OpenBatch(work, []string{"fifo", "zero"})
		for i, g := range files {
			if g != nil {
				g.Close()
				out = append(out, "batch: opened")
			} else {
				out = append(out, "batch: "+errs[i].Error())
			}
		}
		done <- fmt.Sprint(out)
	}()
	select {
	case got := <-done:
		want := fmt.Sprint([]string{"fifo: open " + fifo + ": no such device or address",
			"zero: open " + filepath.Join(work, "zero") + ": no such device or address",
			"batch: open " + fifo + ": no such device or address",
			"batch: open " + filepath.Join(work, "zero") + ": no such device or address"})
		if got != want {
			t.Errorf("got %s, want %s", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("an open of a FIFO hung (hang guard)")
	}
	g, err := f.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatalf("a non-blocking open of the FIFO: %v", err)
	}
	g.Close()
}

// TestNulInPath: a path holding a NUL is refused, as os refuses it; the
// helper's protocol separates paths with NUL, so it would otherwise open
// (or rename, or batch-open) a different path than the one asked for.
func TestNulInPath(t *testing.T) {
	needLandlock(t)
	work := t.TempDir()
	for _, n := range []string{"a", "b", "c"} {
		if err := os.WriteFile(filepath.Join(work, n), []byte(n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f := New(&sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work})
	defer noHelperLeft(t)
	if g, err := f.Open(filepath.Join(work, "a\x00/b")); err == nil {
		g.Close()
		t.Error("a path with a NUL opened")
	} else if !errors.Is(err, syscall.EINVAL) {
		t.Errorf("a path with a NUL: %v, want invalid argument", err)
	}
	if err := f.Rename(filepath.Join(work, "a\x00"), filepath.Join(work, "b")); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("rename of a path with a NUL: %v, want invalid argument", err)
	}
	files, errs := f.OpenBatch(work, []string{"a\x00b", "c"})
	got := []string{}
	for i, g := range files {
		if g == nil {
			got = append(got, errs[i].Error())
			continue
		}
		b := make([]byte, 8)
		n, _ := g.Read(b)
		g.Close()
		got = append(got, string(b[:n]))
	}
	want := []string{"open " + filepath.Join(work, "a\x00b") + ": invalid argument", "c"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("batch: got %q, want %q", got, want)
	}
	if _, err := os.Stat(filepath.Join(work, "a")); err != nil {
		t.Errorf("a is gone: %v", err)
	}
}

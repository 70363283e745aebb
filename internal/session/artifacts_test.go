package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strconv"
	"sync"
	"testing"
)

func mustAllocate(t *testing.T, m *ArtifactManager, kind string) (string, string) {
	t.Helper()
	id, p, err := m.Allocate(kind)
	if err != nil {
		t.Fatalf("Allocate(%q): %v", kind, err)
	}
	return id, p
}

func touch(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestAllocateSequence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "a", "exec")
	m := NewArtifactManager(dir)
	if m.Dir() != dir {
		t.Fatalf("Dir() = %q, want %q", m.Dir(), dir)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("NewArtifactManager created the folder early (stat err %v)", err)
	}
	for i := range 3 {
		id, p := mustAllocate(t, m, "bash")
		if want := strconv.Itoa(i); id != want {
			t.Fatalf("allocation %d: id %q, want %q", i, id, want)
		}
		if want := filepath.Join(dir, fmt.Sprintf("%d.bash.log", i)); p != want {
			t.Fatalf("allocation %d: path %q, want %q", i, p, want)
		}
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatalf("reservation file missing: %v", err)
		}
		if !fi.Mode().IsRegular() || fi.Size() != 0 {
			t.Fatalf("reservation %s: mode %v size %d, want empty regular file", p, fi.Mode(), fi.Size())
		}
		if perm := fi.Mode().Perm(); perm != 0o600 {
			t.Fatalf("reservation %s: perm %o, want 600", p, perm)
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o700 {
		t.Errorf("folder perm %o, want 700", perm)
	}
}

func TestAllocateResumesAfterExistingFiles(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"0.bash.log", "5.python.log", "3.bash.log"} {
		touch(t, filepath.Join(dir, name), "x")
	}
	// None of these match <digits>.<kind>.log, so they must not move the counter.
	for _, name := range []string{"9.log", "10.bash.txt", "abc.bash.log", "12.bash.log.bak", "11..log", "99999999999999999999.bash.log"} {
		touch(t, filepath.Join(dir, name), "x")
	}
	m := NewArtifactManager(dir)
	if id, _ := mustAllocate(t, m, "bash"); id != "6" {
		t.Fatalf("first id after existing 0,3,5 = %q, want 6", id)
	}
	if id, _ := mustAllocate(t, m, "python"); id != "7" {
		t.Fatalf("second id = %q, want 7", id)
	}
}

func TestAllocateResumeCountsNonRegularEntries(t *testing.T) {
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "4.bash.log"), 0o700); err != nil {
		t.Fatal(err)
	}
	m := NewArtifactManager(dir)
	if id, _ := mustAllocate(t, m, "bash"); id != "5" {
		t.Fatalf("id = %q, want 5 (a directory named 4.bash.log still claims 4)", id)
	}
}

func TestAllocateConcurrentGoroutines(t *testing.T) {
	m := NewArtifactManager(t.TempDir())
	const n = 50
	ids := make([]int, n)
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			id, _, err := m.Allocate("bash")
			if err != nil {
				errs <- err
				return
			}
			ids[i], _ = strconv.Atoi(id)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	sort.Ints(ids)
	for i, id := range ids {
		if id != i {
			t.Fatalf("ids = %v, want 0..%d each once", ids, n-1)
		}
	}
}

// Two managers on one folder stand in for two agentsh processes: they share
// nothing but the file system.
func TestAllocateTwoManagersSequential(t *testing.T) {
	dir := t.TempDir()
	a, b := NewArtifactManager(dir), NewArtifactManager(dir)
	seen := map[string]bool{}
	for i := range 10 {
		m := a
		if i%2 == 1 {
			m = b
		}
		id, _ := mustAllocate(t, m, "bash")
		if seen[id] {
			t.Fatalf("id %s handed out twice", id)
		}
		seen[id] = true
	}
}

func TestAllocateTwoManagersConcurrentMixedKinds(t *testing.T) {
	for round := range 10 {
		dir := t.TempDir()
		managers := []*ArtifactManager{NewArtifactManager(dir), NewArtifactManager(dir)}
		kinds := []string{"bash", "python"}
		var mu sync.Mutex
		seen := map[string]string{}
		var wg sync.WaitGroup
		for g := range 40 {
			wg.Go(func() {
				id, p, err := managers[g%2].Allocate(kinds[(g/2)%2])
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if prev, dup := seen[id]; dup {
					t.Errorf("round %d: id %s handed out twice: %s and %s", round, id, prev, p)
				}
				seen[id] = p
			})
		}
		wg.Wait()
		// Every id handed out must still own exactly one file.
		ids, err := managers[0].List()
		if err != nil {
			t.Fatal(err)
		}
		if len(ids) != len(seen) {
			t.Fatalf("round %d: %d ids on disk, %d handed out", round, len(ids), len(seen))
		}
		for id, p := range seen {
			got, err := managers[0].Path(id)
			if err != nil || got != p {
				t.Fatalf("round %d: Path(%s) = %q, %v; want %q", round, id, got, err, p)
			}
		}
	}
}

func TestAllocateSkipsIDTakenByOtherKind(t *testing.T) {
	dir := t.TempDir()
	m := NewArtifactManager(dir)
	mustAllocate(t, m, "bash") // 0; scan done, counter at 1
	// Another process takes 1 under a different kind, after our scan.
	touch(t, filepath.Join(dir, "1.python.log"), "")
	id, p := mustAllocate(t, m, "bash")
	if id != "2" {
		t.Fatalf("id = %q, want 2 (1 is claimed by 1.python.log)", id)
	}
	if _, err := os.Stat(filepath.Join(dir, "1.bash.log")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("losing reservation 1.bash.log was left behind (err %v)", err)
	}
	if filepath.Base(p) != "2.bash.log" {
		t.Fatalf("path = %q", p)
	}
}

func TestAllocateCounterNeverGoesBack(t *testing.T) {
	m := NewArtifactManager(t.TempDir())
	id, _ := mustAllocate(t, m, "bash")
	m.Release(id)
	if id2, _ := mustAllocate(t, m, "bash"); id2 != "1" {
		t.Fatalf("after releasing 0, next id = %q, want 1", id2)
	}
}

func TestAllocateRecreatesRemovedFolder(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "exec")
	m := NewArtifactManager(dir)
	mustAllocate(t, m, "bash")
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if id, _ := mustAllocate(t, m, "bash"); id != "1" {
		t.Fatalf("id after folder removal = %q, want 1", id)
	}
}

func TestAllocateInvalidKind(t *testing.T) {
	m := NewArtifactManager(t.TempDir())
	for _, kind := range []string{"", "a/b", "a.b", "..", "a b"} {
		if _, _, err := m.Allocate(kind); err == nil {
			t.Errorf("Allocate(%q) succeeded, want error", kind)
		}
	}
}

func TestAllocateUnusableFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	touch(t, file, "")
	m := NewArtifactManager(filepath.Join(file, "exec"))
	if _, _, err := m.Allocate("bash"); err == nil {
		t.Fatal("Allocate under a regular file succeeded, want error")
	}
}

func TestRelease(t *testing.T) {
	dir := t.TempDir()
	m := NewArtifactManager(dir)

	empty, emptyPath := mustAllocate(t, m, "bash")
	m.Release(empty)
	if _, err := os.Stat(emptyPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("empty reservation not removed (err %v)", err)
	}

	full, fullPath := mustAllocate(t, m, "bash")
	touch(t, fullPath, "spilled output")
	m.Release(full)
	if _, err := os.Stat(fullPath); err != nil {
		t.Errorf("non-empty artifact removed by Release: %v", err)
	}

	// Another process's empty reservation is not ours to remove.
	other := NewArtifactManager(dir)
	oid, opath := mustAllocate(t, other, "bash")
	m.Release(oid)
	if _, err := os.Stat(opath); err != nil {
		t.Errorf("Release removed another manager's reservation: %v", err)
	}

	// Garbage ids are ignored.
	for _, id := range []string{"", "x", "../0", "99999999999999999999"} {
		m.Release(id)
	}
}

func TestPathAndResolve(t *testing.T) {
	dir := t.TempDir()
	m := NewArtifactManager(dir)
	for range 3 {
		mustAllocate(t, m, "bash")
	}
	want1 := filepath.Join(dir, "1.bash.log")
	for _, in := range []string{"artifact://1", "1", "001", "artifact://01", " artifact://1\n", "ARTIFACT://1"} {
		got, err := m.Resolve(in)
		if err != nil || got != want1 {
			t.Errorf("Resolve(%q) = %q, %v; want %q", in, got, err, want1)
		}
	}
	if got, err := m.Path("2"); err != nil || got != filepath.Join(dir, "2.bash.log") {
		t.Errorf("Path(2) = %q, %v", got, err)
	}
	if got, err := m.Path("000"); err != nil || got != filepath.Join(dir, "0.bash.log") {
		t.Errorf("Path(000) = %q, %v", got, err)
	}
}

func TestResolveRefusals(t *testing.T) {
	dir := t.TempDir()
	m := NewArtifactManager(dir)
	for range 3 {
		mustAllocate(t, m, "bash")
	}
	cases := []struct{ in, want string }{
		{"artifact://../../etc/passwd", "artifact:// ID must be numeric, got: ../../etc/passwd"},
		{"artifact://1/../x", "artifact:// ID must be numeric, got: 1/../x"},
		{"artifact://-1", "artifact:// ID must be numeric, got: -1"},
		{"artifact://1.5", "artifact:// ID must be numeric, got: 1.5"},
		{"artifact://+1", "artifact:// ID must be numeric, got: +1"},
		{"artifact://1 2", "artifact:// ID must be numeric, got: 1 2"},
		{"artifact://\u0661", "artifact:// ID must be numeric, got: \u0661"}, // Arabic-Indic digit one
		{"artifact://3/", "artifact:// ID must be numeric, got: 3/"},
		{"/etc/passwd", "artifact:// ID must be numeric, got: /etc/passwd"},
		{"artifact://", "artifact:// URL requires a numeric ID: artifact://0"},
		{"", "artifact:// URL requires a numeric ID: artifact://0"},
		{"artifact://9", "Artifact 9 not found. Available: 0, 1, 2"},
		{"artifact://0009", "Artifact 9 not found. Available: 0, 1, 2"},
		{"artifact://99999999999999999999", "Artifact 99999999999999999999 not found. Available: 0, 1, 2"},
	}
	for _, c := range cases {
		got, err := m.Resolve(c.in)
		if err == nil {
			t.Errorf("Resolve(%q) = %q, want error %q", c.in, got, c.want)
			continue
		}
		if err.Error() != c.want {
			t.Errorf("Resolve(%q) error = %q, want %q", c.in, err, c.want)
		}
	}

	var nf *ArtifactNotFoundError
	_, err := m.Resolve("artifact://7")
	if !errors.As(err, &nf) || nf.ID != "7" || !reflect.DeepEqual(nf.Available, []int{0, 1, 2}) {
		t.Errorf("Resolve(artifact://7) error %#v, want *ArtifactNotFoundError{7, [0 1 2]}", err)
	}
}

func TestResolveEmptyAndMissingFolder(t *testing.T) {
	empty := NewArtifactManager(t.TempDir())
	if _, err := empty.Resolve("artifact://0"); err == nil || err.Error() != "Artifact 0 not found. Available: none" {
		t.Errorf("empty folder: error %v", err)
	}
	missing := NewArtifactManager(filepath.Join(t.TempDir(), "nope"))
	if _, err := missing.Resolve("artifact://3"); err == nil || err.Error() != "Artifact 3 not found. Available: none" {
		t.Errorf("missing folder: error %v", err)
	}
	ids, err := missing.List()
	if err != nil || len(ids) != 0 {
		t.Errorf("missing folder: List() = %v, %v", ids, err)
	}
}

func TestResolveRefusesSymlinkAndNonRegular(t *testing.T) {
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret")
	touch(t, outside, "secret")
	touch(t, filepath.Join(dir, "0.bash.log"), "ok")
	if err := os.Symlink(outside, filepath.Join(dir, "3.bash.log")); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "4.bash.log"), 0o700); err != nil {
		t.Fatal(err)
	}
	m := NewArtifactManager(dir)
	for _, id := range []string{"3", "4"} {
		got, err := m.Path(id)
		if err == nil {
			t.Errorf("Path(%s) = %q, want refusal", id, got)
			continue
		}
		want := fmt.Sprintf("artifact %s: %s is not a regular file; refusing to follow it", id, filepath.Join(dir, id+".bash.log"))
		if err.Error() != want {
			t.Errorf("Path(%s) error = %q, want %q", id, err, want)
		}
	}
	ids, err := m.List()
	if err != nil || !reflect.DeepEqual(ids, []int{0}) {
		t.Errorf("List() = %v, %v; want [0] (symlink and directory excluded)", ids, err)
	}
}

func TestList(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"10.bash.log", "2.bash.log", "2.python.log", "0.bash.log", "notes.txt", "7.log"} {
		touch(t, filepath.Join(dir, name), "")
	}
	ids, err := NewArtifactManager(dir).List()
	if err != nil {
		t.Fatal(err)
	}
	if want := []int{0, 2, 10}; !reflect.DeepEqual(ids, want) {
		t.Errorf("List() = %v, want %v", ids, want)
	}
}

func TestParseArtifactURL(t *testing.T) {
	ok := map[string]string{
		"artifact://3":   "3",
		"3":              "3",
		"artifact://0":   "0",
		"artifact://000": "0",
		"artifact://007": "7",
		"Artifact://12":  "12",
	}
	for in, want := range ok {
		if got, err := ParseArtifactURL(in); err != nil || got != want {
			t.Errorf("ParseArtifactURL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"artifact://", "artifact://x", "artifact://1/2", "artifact:/1", "file://1"} {
		if got, err := ParseArtifactURL(in); err == nil {
			t.Errorf("ParseArtifactURL(%q) = %q, want error", in, got)
		}
	}
}

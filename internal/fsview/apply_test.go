package fsview

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"
)

// inView applies v on a throwaway locked thread and runs script with
// bash there: the thread dies with its mount namespace.
func inView(t *testing.T, v View, script string, args ...string) (string, error) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs CAP_SYS_ADMIN (the guardian has it in its user namespace)")
	}
	type result struct {
		out string
		err error
	}
	done := make(chan result)
	go func() {
		runtime.LockOSThread() // never unlocked
		if err := Apply(v); err != nil {
			done <- result{"", err}
			return
		}
		out, err := exec.Command("bash", append([]string{"-c", script, "bash"}, args...)...).CombinedOutput()
		done <- result{string(out), err}
	}()
	r := <-done
	return r.out, r.err
}

// TestApply: a mask hides a folder, a read-only bind inside it gets its
// mount point made in the mask, a file mask covers a file, and the rest of
// the tree is read-only while a bound root stays writable.
func TestApply(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, body := range map[string]string{"w/secret/key": "KEY\n", "w/secret/allowed/a": "A\n", "w/netrc": "N\n", "ro/f": "F\n"} {
		if err := os.MkdirAll(filepath.Join(root, filepath.Dir(p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := filepath.Join(root, "w")
	v := View{{Bind, w}, {MaskFile, w + "/netrc"}, {MaskDir, w + "/secret"}, {ReadOnly, w + "/secret/allowed"}}
	out, err := inView(t, v, `cd "$1"
ls -A secret; cat secret/allowed/a; echo x > secret/allowed/b; cat netrc; echo x > netrc
echo new > new && cat new; echo x > ../ro/f
echo end`, w)
	want := "allowed\nA\n" +
		"bash: line 2: secret/allowed/b: Read-only file system\n" +
		"bash: line 2: netrc: Read-only file system\n" +
		"new\nbash: line 3: ../ro/f: Read-only file system\nend\n"
	if err != nil || out != want {
		t.Errorf("got %q (%v), want %q", out, err, want)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "ro/f")); string(b) != "F\n" {
		t.Errorf("outside file changed: %q", b)
	}
	if st, err := os.Stat(filepath.Join(w, "secret/allowed")); err != nil || !st.IsDir() {
		t.Errorf("the real folder changed: %v", err)
	}
}

// TestApplyRefusesALinkedBind: a writable root that became a symbolic
// link since the plan is not bound back (that would bind what it points
// to), and the failure names the path, so the start fails rather than
// falling back to a weaker sandbox.
func TestApplyRefusesALinkedBind(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(root, "secret"), 0o700); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "work")
	if err := os.Symlink(filepath.Join(root, "secret"), link); err != nil {
		t.Fatal(err)
	}
	_, err = inView(t, View{{Bind, link}}, "true")
	var ve *Error
	if !errors.As(err, &ve) || ve.Path != link || !errors.Is(err, syscall.ELOOP) || ve.System() {
		t.Errorf("got %v, want a clone error on %s", err, link)
	}
}

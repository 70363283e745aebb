package bash

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"agentsh/internal/jobs"
)

func withHome(t *testing.T, bashrc string) string {
	t.Helper()
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ".bashrc"), []byte(bashrc), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("HOME", home)
	RemoveSnapshots()
	t.Cleanup(RemoveSnapshots)
	return home
}

func snapshotWithGuard(t *testing.T, shell string) string {
	t.Helper()
	ch := make(chan string, 1)
	go func() { ch <- GetOrCreateSnapshot(shell, nil) }()
	select {
	case p := <-ch:
		return p
	case <-time.After(hangGuard):
		t.Fatal("snapshot hung")
	}
	return ""
}

func TestSnapshotCarriesRcIntoRuns(t *testing.T) {
	home := withHome(t, `case $- in *i*) ;; *) return;; esac
alias ll='echo LL-ALIAS'
alias ls='ls --color=always'
myfn() { echo "MYFN $*"; }
_private() { :; }
shopt -s globstar
export PATH="$HOME/mybin:$PATH"
`)
	sh := testShell(t)
	snap := snapshotWithGuard(t, sh.Path)
	if snap == "" {
		t.Fatal("no snapshot")
	}
	sh.SnapshotPath = snap
	e := newTestExecutor(t)
	probe := "ll; myfn a b; shopt globstar; echo \"$PATH\" | cut -d: -f1; type -t _private ls || true"
	r := run(t, e, probe, RunOptions{Shell: sh})
	want := "LL-ALIAS\nMYFN a b\nglobstar       \ton\n" + home + "/mybin\nalias\n"
	if r.Output != want {
		t.Fatalf("the user's shell: got %q want %q", r.Output, want)
	}
	// The model's shells run the standard ls (the user's is held back,
	// and the first result says so, never silently).
	r = run(t, e, probe, RunOptions{Shell: sh, View: ModelView})
	if want := "LL-ALIAS\nMYFN a b\nglobstar       \ton\n" + home + "/mybin\nfile\n"; r.Output != want {
		t.Fatalf("the model's shell: got %q want %q", r.Output, want)
	}
	// Cached: the same file until it disappears.
	if again := GetOrCreateSnapshot(sh.Path, nil); again != snap {
		t.Fatalf("not cached: %s vs %s", again, snap)
	}
	os.Remove(snap)
	if again := GetOrCreateSnapshot(sh.Path, nil); again == snap || again == "" {
		t.Fatalf("not regenerated: %q", again)
	}
}

func TestSnapshotHangingOrFailingRc(t *testing.T) {
	for name, rc := range map[string]string{
		"hangs": "echo started >&2; sleep 100\n",
		"fails": "alias a=b\nexit 1\n",
		"junk":  "this is not bash (((\n",
	} {
		t.Run(name, func(t *testing.T) {
			withHome(t, rc)
			sh := testShell(t)
			sh.SnapshotPath = snapshotWithGuard(t, sh.Path)
			if name == "hangs" && sh.SnapshotPath != "" {
				t.Fatalf("a hanging rc produced a snapshot %s", sh.SnapshotPath)
			}
			e := newTestExecutor(t)
			expect(t, run(t, e, "echo works", RunOptions{Shell: sh}), "works\n", "0")
		})
	}
}

func TestSnapshotOnlyForBash(t *testing.T) {
	if p := GetOrCreateSnapshot("/bin/sh", nil); p != "" {
		t.Fatalf("snapshot for sh: %s", p)
	}
}

// A lazy snapshot is taken by the first run and carries the rc like an
// eager one.
func TestLazySnapshot(t *testing.T) {
	withHome(t, "myfn() { echo \"MYFN $*\"; }\n")
	sh := testShell(t)
	sh.SnapshotPath, sh.LazySnapshot = "", true
	e := newTestExecutor(t)
	r := run(t, e, "myfn lazy", RunOptions{Shell: sh})
	if r.Output != "MYFN lazy\n" {
		t.Fatalf("got %q", r.Output)
	}
}

// TestRcToolNamesStayTheUsers: the user's rc aliases and
// functions named after common tools (grep, ls, rm) are in the user's
// shells and jobs, not in the model's shells, jobs or PTY commands (nor
// through the state the user's `!` captures), and the model's first bash
// result says which were left out, once.
func TestRcToolNamesStayTheUsers(t *testing.T) {
	home := withHome(t, `case $- in *i*) ;; *) return;; esac
alias grep='grep --color=always -n'
alias ll='echo LL'
rm() { echo "user rm $*"; }
`)
	sh := testShell(t)
	sh.LazySnapshot = true
	sh.Env = map[string]string{"HOME": home}
	e := newTestExecutor(t)
	work := t.TempDir()
	st := NewSessionState(work)
	const probe = "type -t grep rm ll"
	// The user's `!`, which also captures the user's layer.
	expect(t, run(t, e, probe, RunOptions{Shell: sh, SessionKey: "user", State: st, Capture: CaptureAll}), "alias\nfunction\nalias\n", "0")
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	j, err := StartJob(m, probe, work, 0, "", "", ToolContext{Cwd: work, Settings: ToolSettings{Shell: sh}, State: st})
	if err != nil {
		t.Fatal(err)
	}
	if got := jobText(t, j); got != "alias\nfunction\nalias\n" {
		t.Errorf("the user's job: %q", got)
	}

	model := sh
	model.ScrubEnv = DefaultScrubEnv()
	tool := &Tool{Executor: e, Jobs: m}
	tc := ToolContext{Cwd: work, Settings: ToolSettings{Shell: model}, State: st, View: ModelView}
	res, err := tool.Execute(context.Background(), ToolParams{Command: probe + "; echo rc=$?"}, tc, nil)
	note := "[The user's shell rc defines function rm, alias grep: named after common tools, they are left out of the model's shells, " +
		"where those are the standard commands; the user's ! commands and jobs keep them.]"
	if err != nil || res.Text != note+"\n\nfile\nfile\nalias\nrc=0\n" {
		t.Fatalf("the model's first call: %+v %v", res, err)
	}
	res, err = tool.Execute(context.Background(), ToolParams{Command: probe}, tc, nil)
	if err != nil || res.Text != "file\nfile\nalias\n" {
		t.Fatalf("the model's second call: %+v %v", res, err)
	}
	ptc := tc
	ptc.Settings.VirtualTerminal = "on"
	r, _, err := runPTY(context.Background(), probe, work, time.Minute, "", "", ptc, nil)
	if err != nil || r.Output != "file\nfile\nalias\n" {
		t.Fatalf("the model's PTY command: %q %v", r.Output, err)
	}
	j, err = StartJob(m, probe, work, 0, "", "", tc)
	if err != nil {
		t.Fatal(err)
	}
	if got := jobText(t, j); got != "file\nfile\nalias\n" {
		t.Errorf("the model's job: %q", got)
	}

	// One the user defines with `!` reaches the model as any other.
	expect(t, run(t, e, "alias grep='echo user-grep'", RunOptions{Shell: sh, SessionKey: "user", State: st, Capture: CaptureAll}), "", "0")
	if res, err := tool.Execute(context.Background(), ToolParams{Command: "grep x"}, tc, nil); err != nil || res.Text != "user-grep x\n" {
		t.Fatalf("the user's own grep alias in the model's shell: %+v %v", res, err)
	}
	// The model's variant is checked as the snapshot is: changed behind
	// agentsh's back, it is taken again, never sourced.
	variant := ModelSnapshot(model.snapshotTaken())
	f, err := os.OpenFile(variant, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = f.WriteString("alias grep='echo tampered'\n")
	f.Close()
	r2 := run(t, newTestExecutor(t), "type -t rm ll grep", RunOptions{Shell: model, View: ModelView})
	if r2.Output != "file\nalias\nfile\n" {
		t.Fatalf("a tampered model's snapshot was sourced: %q", r2.Output)
	}
}

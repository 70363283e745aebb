package bash

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agentsh/internal/jobs"
)

// benchSessionHome is a HOME with a typical small rc (aliases, functions,
// a PATH entry) that ~/.bash_profile sources, as most users have it.
func benchSessionHome(b *testing.B) string {
	b.Helper()
	home := b.TempDir()
	rc := `case $- in *i*) ;; *) return;; esac
alias ll='ls -alF'
alias la='ls -A'
gs() { git status "$@"; }
mkcd() { mkdir -p "$1" && cd "$1"; }
export PATH="$HOME/.local/bin:$PATH"
`
	for name, text := range map[string]string{".bashrc": rc, ".bash_profile": `[ -f ~/.bashrc ] && . ~/.bashrc` + "\n"} {
		if err := os.WriteFile(filepath.Join(home, name), []byte(text), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	return home
}

// BenchmarkStartJobSession: a user's job as the session starts it
// (StartJob: the session's shell config, rc snapshot and state with a
// function defined by the user), from the call to its first output.
func BenchmarkStartJobSession(b *testing.B) {
	home := benchSessionHome(b)
	b.Setenv("HOME", home)
	RemoveSnapshots()
	b.Cleanup(RemoveSnapshots)
	sh := benchShellConfig(b)
	sh.Env = map[string]string{"HOME": home}
	sh.LazySnapshot = true
	e := NewExecutor()
	b.Cleanup(e.Close)
	work := b.TempDir()
	st := NewSessionState(work)
	if r, err := e.Run(context.Background(), `f() { echo f; }; export JOBVAR=1`, RunOptions{Shell: sh, SessionKey: "user", State: st, Capture: CaptureAll}); err != nil || r.Output != "" {
		b.Fatalf("user's command: %+v %v", r, err)
	}
	m := jobs.NewManager()
	b.Cleanup(m.Close)
	tc := ToolContext{Cwd: work, Settings: ToolSettings{Shell: sh}, State: st}
	for b.Loop() {
		j, err := StartJob(m, "echo ready; exec sleep 60", work, 0, "", "", tc)
		if err != nil {
			b.Fatal(err)
		}
		deadline := time.Now().Add(30 * time.Second)
		for !strings.Contains(j.ReadNew().Text, "ready") {
			if time.Now().After(deadline) {
				b.Fatalf("no output (hang guard): %s", j.State())
			}
			time.Sleep(200 * time.Microsecond)
		}
		b.StopTimer()
		j.Kill()
		b.StartTimer()
	}
}

// BenchmarkBackgroundReadyLine: a model's `background: true` call for a
// server that prints its ready line at once, from the call to its result.
func BenchmarkBackgroundReadyLine(b *testing.B) {
	m := jobs.NewManager()
	b.Cleanup(m.Close)
	e := NewExecutor()
	b.Cleanup(e.Close)
	tool := &Tool{Executor: e, Jobs: m}
	tc := ToolContext{Cwd: b.TempDir(), Settings: ToolSettings{Shell: benchShellConfig(b)}}
	tc.Settings.Shell.Env = map[string]string{"HOME": b.TempDir()}
	for b.Loop() {
		r, err := tool.Execute(context.Background(), ToolParams{Command: "echo ready; exec sleep 60", Background: true}, tc, nil)
		if err != nil || !strings.Contains(r.Text, "\nready\n") {
			b.Fatalf("%+v %v", r, err)
		}
		b.StopTimer()
		for _, j := range m.List() {
			j.Kill()
		}
		b.StartTimer()
	}
}

package agent

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/session"
)

// sessionsRig is a Sessions on a private data folder, its warnings kept.
type sessionsRig struct {
	*Sessions
	mu    sync.Mutex
	warns []string
}

func newSessionsRig(t *testing.T, noSave bool) *sessionsRig {
	t.Helper()
	isolateData(t)
	t.Setenv("TMPDIR", t.TempDir()) // NoSave's folders, checked below
	ex := bash.NewExecutor()
	t.Cleanup(ex.Close)
	r := &sessionsRig{}
	r.Sessions = NewSessions(SessionsConfig{Cwd: t.TempDir(), Executor: ex, NoSave: noSave, RestoreModel: true,
		Models: ModelsOf(nil, ""), Warn: func(s string) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.warns = append(r.warns, s)
		}})
	t.Cleanup(r.Close)
	return r
}

func (r *sessionsRig) warnings() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.warns...)
}

func say(t *testing.T, a *AgentSession, text string) {
	t.Helper()
	if err := a.Append(&session.UserMessage{Text: text, Timestamp: 1}); err != nil {
		t.Fatal(err)
	}
}

// New makes the current conversation, saved under the data folder; Open of
// its file gives the open one back (one store per file); Open of another
// makes that one current; List finds those with a message.
func TestSessionsNewOpenList(t *testing.T) {
	r := newSessionsRig(t, false)
	first, modelErr, err := r.First(nil, true)
	if err != nil || modelErr != nil || r.Current() != first || first.Store() != nil {
		t.Fatalf("First(nil) = %v, %v, %v", first, modelErr, err)
	}
	a, err := r.New()
	if err != nil || r.Current() != a || a.Store() == nil || a.ID() == first.ID() {
		t.Fatalf("New = %v, %v (current %v)", a, err, r.Current())
	}
	say(t, a, "hello a")
	again, skipped, err := r.Open(a.Store().Path())
	if err != nil || again != a || len(skipped) != 0 {
		t.Fatalf("Open of the open file = %v, %v, %v; want the same session", again, skipped, err)
	}
	b, err := r.New()
	if err != nil {
		t.Fatal(err)
	}
	say(t, b, "hello b")
	list, err := r.List()
	if err != nil || len(list) != 2 {
		t.Fatalf("List = %v, %v; want the two sessions with a message", list, err)
	}
	reopened, skipped, err := r.Open(a.Store().Path())
	if err != nil || len(skipped) != 0 || reopened == a || reopened.ID() != a.ID() || r.Current() != reopened {
		t.Fatalf("Open of a's file from b = %v, %v, %v", reopened, skipped, err)
	}
	if msgs := reopened.Messages(); len(msgs) != 1 || msgs[0].(*session.UserMessage).Text != "hello a" {
		t.Fatalf("reopened messages %v", msgs)
	}
}

// Leave ends the left conversation's shells and closes its file in the
// background; Close waits for it. A corrupt line is skipped, returned by
// Open and told to Warn by OpenTelling.
func TestSessionsLeaveAndCorruptLines(t *testing.T) {
	r := newSessionsRig(t, false)
	a, _, err := r.First(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.New()
	if err != nil {
		t.Fatal(err)
	}
	say(t, b, "kept")
	run, err := b.ExecuteBashRun(context.Background(), "echo $$", nil, BashOptions{})
	if err != nil || run.Output == "" {
		t.Fatalf("a bang command in b: %+v %v", run, err)
	}
	pid := strings.TrimSpace(run.Output)
	path := b.Store().Path()
	r.Leave(b, a)
	if r.Current() != a {
		t.Fatal("Leave did not make a current")
	}
	r.ending.Wait()
	if _, err := os.Stat("/proc/" + pid); err == nil {
		t.Errorf("b's shell %s is alive after Leave", pid)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString("{not json\n"); err != nil {
		t.Fatal(err)
	}
	f.Close()
	c, skipped, err := r.Open(path)
	if err != nil || len(skipped) != 1 || len(c.Messages()) != 2 { // "kept" and the bang command
		t.Fatalf("Open with a corrupt line = %v, %v, %v", c, skipped, err)
	}
	r.Leave(c, a)
	if _, err := r.OpenTelling(path); err != nil {
		t.Fatal(err)
	}
	if w := r.warnings(); len(w) != 1 || !strings.HasPrefix(w[0], "skipped 1 corrupt line(s) of the session: ") {
		t.Fatalf("warnings %q", w)
	}
}

// NoSave: nothing is written, each conversation gets a temporary folder for
// its full outputs, and Close removes every one.
func TestSessionsNoSave(t *testing.T) {
	r := newSessionsRig(t, true)
	a, _, err := r.First(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := r.New()
	if err != nil || b.Store() != nil {
		t.Fatalf("New without saving = %v, %v", b, err)
	}
	dirs := []string{a.Artifacts().Dir(), b.Artifacts().Dir()}
	for _, d := range dirs {
		if !strings.HasPrefix(filepath.Base(d), tempArtifactsPrefix) {
			t.Fatalf("artifact folder %q", d)
		}
		if _, err := os.Stat(d); err != nil {
			t.Fatal(err)
		}
	}
	if list, err := r.List(); err != nil || len(list) != 0 {
		t.Fatalf("List = %v, %v; nothing is saved", list, err)
	}
	r.Close()
	for _, d := range dirs {
		if _, err := os.Stat(d); !os.IsNotExist(err) {
			t.Errorf("%s left after Close: %v", d, err)
		}
	}
	if _, err := r.New(); err == nil {
		t.Error("New after Close made a session")
	}
}

package agent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/jobs"
	"agentsh/internal/tools"
)

// call runs one tool of reg with args.
func call(t *testing.T, reg *tools.Registry, name string, args any) tools.Result {
	t.Helper()
	tool, ok := reg.Get(name)
	if !ok {
		t.Fatalf("no %s tool in %v", name, reg.Names())
	}
	b, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	return tool.Execute(context.Background(), b, nil)
}

// TestNewToolsFollowsCurrentSession: one registry serves whichever session
// is current at each call, for bash, the file tools and artifact:// paths,
// so a mode can switch sessions without rebuilding its tools.
func TestNewToolsFollowsCurrentSession(t *testing.T) {
	stored, _ := newAgent(t) // with a store: it keeps artifacts
	id, path, err := stored.Artifacts().Allocate("bash")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte("full output of the first session\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	otherDir := t.TempDir()
	other, err := New(otherDir, nil, stored.exec, bash.ShellConfig{}) // no store: no artifacts
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		a    *AgentSession
		text string
	}{{stored, "first\n"}, {other, "second\n"}} {
		if err := os.WriteFile(filepath.Join(s.a.Cwd(), "here.txt"), []byte(s.text), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	var current atomic.Pointer[AgentSession]
	current.Store(stored)
	jm := jobs.NewManager()
	t.Cleanup(jm.Close)
	reg, err := NewTools(ToolsConfig{Current: current.Load, Executor: stored.exec, Jobs: jm})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{tools.BashName, tools.ReadName, tools.GrepName, tools.FindName, tools.EditName, tools.WriteName,
		tools.JobsName, tools.JobOutputName, tools.JobInputName, tools.JobKillName}
	if got := reg.Names(); !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}

	artifact := "artifact://" + id
	check := func(a *AgentSession, text, art string) {
		t.Helper()
		if r := call(t, reg, tools.BashName, map[string]any{"command": "pwd; cat here.txt"}); r.IsError ||
			r.Content != a.Cwd()+"\n"+text {
			t.Errorf("bash in session %s: %+v, want its cwd %s and %q", a.ID(), r, a.Cwd(), text)
		}
		if r := call(t, reg, tools.ReadName, map[string]any{"path": "here.txt"}); r.IsError || !strings.Contains(r.Content, strings.TrimSpace(text)) {
			t.Errorf("read here.txt in session %s: %+v, want %q", a.ID(), r, text)
		}
		if r := call(t, reg, tools.ReadName, map[string]any{"path": artifact}); !strings.Contains(r.Content, art) {
			t.Errorf("read %s in session %s: %+v, want %q", artifact, a.ID(), r, art)
		}
	}
	check(stored, "first\n", "full output of the first session")
	current.Store(other)
	check(other, "second\n", "Cannot open "+artifact+": artifact:// paths are not available in this session")
	current.Store(stored)
	check(stored, "first\n", "full output of the first session")

	// Without a job manager: no job tools, and bash offers no background.
	plain, err := NewTools(ToolsConfig{Current: current.Load, Executor: stored.exec})
	if err != nil {
		t.Fatal(err)
	}
	if got := plain.Names(); !slices.Equal(got, want[:6]) {
		t.Errorf("tools without jobs %v, want %v", got, want[:6])
	}
	if _, err := NewTools(ToolsConfig{}); err == nil {
		t.Error("NewTools without a session succeeded")
	}
}

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"agentsh/internal/bash"
)

type fakeTool struct{ name string }

func (f fakeTool) Name() string            { return f.name }
func (f fakeTool) Description() string     { return "fake " + f.name }
func (f fakeTool) Schema() json.RawMessage { return json.RawMessage(`{"type":"object"}`) }
func (f fakeTool) Execute(context.Context, json.RawMessage, func(string)) Result {
	return Result{Content: f.name}
}

func newBash(t *testing.T, cwd string, interceptor bool) Tool {
	t.Helper()
	e := bash.NewExecutor()
	t.Cleanup(e.Close)
	return NewBash(&bash.Tool{Executor: e}, func() bash.ToolContext {
		return bash.ToolContext{Cwd: cwd, ToolNames: []string{"stale"},
			Settings: bash.ToolSettings{InterceptorEnabled: interceptor}}
	})
}

func TestRegistry(t *testing.T) {
	r, err := NewRegistry(newBash(t, t.TempDir(), false), fakeTool{"read"})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Register(fakeTool{"read"}); err == nil {
		t.Error("duplicate name accepted")
	}
	if err := r.Register(fakeTool{""}); err == nil {
		t.Error("empty name accepted")
	}
	if got := r.Names(); !reflect.DeepEqual(got, []string{"bash", "read"}) {
		t.Errorf("Names = %v", got)
	}
	if tl, ok := r.Get("read"); !ok || tl.Name() != "read" {
		t.Errorf("Get(read) = %v %v", tl, ok)
	}
	if _, ok := r.Get("nope"); ok {
		t.Error("Get(nope) found something")
	}
	specs := r.Specs()
	if len(specs) != 2 || specs[0].Name != "bash" || specs[1].Description != "fake read" {
		t.Fatalf("Specs = %+v", specs)
	}
	var schema struct {
		Type       string                       `json:"type"`
		Properties map[string]map[string]string `json:"properties"`
		Required   []string                     `json:"required"`
	}
	if err := json.Unmarshal(specs[0].Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	if schema.Type != "object" || !reflect.DeepEqual(schema.Required, []string{"command"}) {
		t.Errorf("schema = %+v", schema)
	}
	for _, p := range []string{"command", "timeout", "cwd", "head", "tail"} {
		if schema.Properties[p]["description"] == "" || schema.Properties[p]["type"] == "" {
			t.Errorf("property %s = %v", p, schema.Properties[p])
		}
	}
	var nilReg *Registry
	if nilReg.Names() != nil || nilReg.Specs() != nil {
		t.Error("nil registry not empty")
	}
}

func TestBashExecute(t *testing.T) {
	cwd := t.TempDir()
	b := newBash(t, cwd, false)
	var mu sync.Mutex
	var updates []string
	res := b.Execute(context.Background(), json.RawMessage(`{"command":"echo hi; pwd"}`), func(s string) {
		mu.Lock()
		updates = append(updates, s)
		mu.Unlock()
	})
	want := "hi\n" + cwd + "\n"
	if res.IsError || strings.TrimSpace(res.Content) != strings.TrimSpace(want) {
		t.Errorf("result = %+v, want %q", res, want)
	}
	var d bash.ToolDetails
	if err := json.Unmarshal(res.Details, &d); err != nil || d.ExitCode == nil || *d.ExitCode != 0 {
		t.Errorf("details = %s (%v)", res.Details, err)
	}
	mu.Lock()
	if len(updates) == 0 {
		t.Error("no onUpdate")
	}
	mu.Unlock()

	res = b.Execute(context.Background(), json.RawMessage(`{"command":"exit 3"}`), nil)
	if !res.IsError || !strings.Contains(res.Content, "Command exited with code 3") {
		t.Errorf("exit 3 = %+v", res)
	}
}

func TestBashBadArguments(t *testing.T) {
	b := newBash(t, t.TempDir(), false)
	for _, args := range []string{`{"command":5}`, `{"command":"ls","timeout":"soon"}`, `not json`} {
		_, perr := bash.ParseToolParams([]byte(args))
		if perr == nil {
			t.Fatalf("%s parsed", args)
		}
		res := b.Execute(context.Background(), json.RawMessage(args), nil)
		if !res.IsError || res.Content != perr.Error() {
			t.Errorf("%s: result %+v, want error %q", args, res, perr.Error())
		}
	}
	res := b.Execute(context.Background(), json.RawMessage(`{}`), nil)
	if !res.IsError || res.Content != "Command must not be empty" {
		t.Errorf("{} = %+v", res)
	}
}

func TestBashToolNamesAtCallTime(t *testing.T) {
	cwd := t.TempDir()
	if err := os.WriteFile(filepath.Join(cwd, "f.txt"), []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := newBash(t, cwd, true)
	r, err := NewRegistry(b)
	if err != nil {
		t.Fatal(err)
	}
	args := json.RawMessage(`{"command":"cat f.txt"}`)
	// Only bash is registered: no read tool to suggest, so cat runs.
	if res := b.Execute(context.Background(), args, nil); res.IsError || res.Content != "content" && res.Content != "content\n" {
		t.Fatalf("before read registered: %+v", res)
	}
	if err := r.Register(fakeTool{"read"}); err != nil {
		t.Fatal(err)
	}
	res := b.Execute(context.Background(), args, nil)
	if !res.IsError {
		t.Fatalf("after read registered, cat was not intercepted: %+v", res)
	}
	var d bash.ToolDetails
	if err := json.Unmarshal(res.Details, &d); err != nil || d.SuggestedTool != "read" {
		t.Errorf("details = %s (%v)", res.Details, err)
	}
}

func TestBashAbort(t *testing.T) {
	b := newBash(t, t.TempDir(), false)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan Result, 1)
	go func() {
		done <- b.Execute(ctx, json.RawMessage(`{"command":"echo started; sleep 30"}`), func(string) { cancel() })
	}()
	var res Result
	select {
	case res = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("Execute did not return after cancel (hang)")
	}
	if !res.IsError || !res.Aborted {
		t.Errorf("aborted = %+v", res)
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const typoProgram = "package main\n\nimport \"fmt\"\n\nfunc main() {\n\tfmt.Println(\"helo\")\n}\n"

// fixTypoScript is a small coding task: find the file, read it, fix it, and
// prove it with go vet and go run through bash.
func fixTypoScript(n int, w sseWriter) {
	switch n {
	case 0:
		w.tool("call_find", "find", `{"pattern":"**/*.go"}`)
	case 1:
		w.tool("call_read", "read", `{"path":"main.go"}`)
	case 2:
		w.tool("call_edit", "edit", `{"path":"main.go","oldText":"fmt.Println(\"helo\")","newText":"fmt.Println(\"hello\")"}`)
	case 3:
		w.tool("call_bash", "bash", `{"command":"go vet ./... && go run ."}`)
	default:
		w.answer("Fixed the typo.")
	}
}

func goEnv(t *testing.T) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not on PATH")
	}
	out, err := exec.Command(goBin, "env", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	// The warm caches of this test's own go, so vet compiles nothing new.
	return []string{"GOCACHE=" + lines[0], "GOMODCACHE=" + lines[1], "GOTOOLCHAIN=local", "GOFLAGS="}
}

// The agent loop end to end with the file tools: a fake model finds, reads
// and edits a file, then runs go vet through bash; every result reaches the
// next request and the file on disk is fixed.
func TestAgentLoopFileTools(t *testing.T) {
	t.Parallel()
	env := goEnv(t)
	srv := newSSEServer(t, fixTypoScript)
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, "go.mod"), "module typo\n\ngo 1.21\n")
	writeFile(t, filepath.Join(s.work, "main.go"), typoProgram)
	env = append(env, srv.env()...)
	r := s.runIn(nil, append(env, "AGENTSH_MODEL=openai/test-model"), "-p", "fix the typo")
	if r.code != 0 || r.stdout != "Fixed the typo.\n" {
		t.Fatalf("%v", r)
	}
	got, _ := os.ReadFile(filepath.Join(s.work, "main.go"))
	if string(got) != strings.Replace(typoProgram, "helo", "hello", 1) {
		t.Fatalf("main.go after the edit:\n%s", got)
	}
	reqs := srv.requests()
	if len(reqs) != 5 {
		t.Fatalf("%d requests, want 5", len(reqs))
	}
	var names []string
	for _, tl := range reqs[0]["tools"].([]any) {
		fn := tl.(map[string]any)["function"].(map[string]any)
		names = append(names, fn["name"].(string))
	}
	if strings.Join(names, ",") != "bash,read,grep,find,edit,write,jobs,job_output,job_input,job_kill" {
		t.Errorf("tools sent: %v", names)
	}
	checks := []struct {
		req  int
		want []string
	}{
		{1, []string{"main.go"}},
		{2, []string{"6\t\tfmt.Println(\"helo\")"}},
		{3, []string{"-\tfmt.Println(\"helo\")", "+\tfmt.Println(\"hello\")"}},
		{4, []string{"hello"}},
	}
	for _, c := range checks {
		res := lastToolResult(reqs[c.req])
		for _, w := range c.want {
			if !strings.Contains(res, w) {
				t.Errorf("request %d: tool result lacks %q:\n%s", c.req, w, res)
			}
		}
	}
	if res := lastToolResult(reqs[4]); strings.Contains(res, "exited with code") {
		t.Errorf("go vet / go run failed:\n%s", res)
	}
}

// With the interceptor on, a model's `cat file` comes back as a tool error
// naming the read tool, and its next request carries that text.
func TestAgentLoopInterceptorBlocks(t *testing.T) {
	t.Parallel()
	srv := newSSEServer(t, func(n int, w sseWriter) {
		if n == 0 {
			w.tool("call_cat", "bash", `{"command":"cat main.go"}`)
			return
		}
		w.answer("I will use read.")
	})
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"bashInterceptor": {"enabled": true}}`)
	writeFile(t, filepath.Join(s.work, "main.go"), typoProgram)
	r := s.runIn(nil, append(srv.env(), "AGENTSH_MODEL=openai/test-model"), "-p", "show main.go")
	if r.code != 0 || r.stdout != "I will use read.\n" {
		t.Fatalf("%v", r)
	}
	reqs := srv.requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	res := lastToolResult(reqs[1])
	want := "Blocked: Use the `read` tool instead of cat/head/tail. It provides better context and handles binary files.\n\nOriginal command: cat main.go"
	if res != want {
		t.Errorf("tool result %q, want %q", res, want)
	}
}

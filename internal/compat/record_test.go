package compat

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"agentsh/internal/fakemodel"
)

// TestRecordOmp records the golden transcripts in testdata from the
// reference agent (omp 18.2.3) against the fake model server with the
// fixed scripts. It runs only when asked (scripts/compat/record.sh):
//
//	AGENTSH_RECORD_OMP=1 AGENTSH_OMP_DIR=DIR go test ./internal/compat -run TestRecordOmp
//
// where DIR holds node_modules with the bun package and
// @oh-my-pi/pi-coding-agent. omp runs with a private HOME and XDG dirs and
// knows only the fake provider.
func TestRecordOmp(t *testing.T) {
	if os.Getenv("AGENTSH_RECORD_OMP") != "1" {
		t.Skip("set AGENTSH_RECORD_OMP=1 (and AGENTSH_OMP_DIR) to record omp's transcripts")
	}
	dir := os.Getenv("AGENTSH_OMP_DIR")
	bun := filepath.Join(dir, "node_modules", ".bin", "bun")
	cli := filepath.Join(dir, "node_modules", "@oh-my-pi", "pi-coding-agent", "dist", "cli.js")
	for _, p := range []string{bun, cli} {
		if _, err := os.Stat(p); err != nil {
			t.Fatalf("AGENTSH_OMP_DIR: %v", err)
		}
	}

	// The script reads the server through an atomic: its handler runs on
	// another goroutine than the one that gets the server from New.
	var ref atomic.Pointer[fakemodel.Server]
	srv := fakemodel.New(t, ModelScript(ref.Load))
	ref.Store(srv)

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()

	// RPC mode.
	e := ompEnv(t, srv)
	cmd := exec.CommandContext(ctx, bun, cli, "--mode", "rpc", "--model", "fake/fake-model")
	cmd.Dir, cmd.Env = e.work, e.env
	tr, problems, err := RunRPC(ctx, cmd, RPCScript)
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) > 0 {
		t.Fatalf("omp did not finish the script: %v", problems)
	}
	e.save(t, tr, "omp-rpc.jsonl", "omp-session-rpc.jsonl")

	// JSON mode.
	e = ompEnv(t, srv)
	cmd = exec.CommandContext(ctx, bun, cli, "--mode", "json", "--model", "fake/fake-model", Prompt)
	cmd.Dir, cmd.Env = e.work, e.env
	tr, err = RunJSON(ctx, cmd)
	if err != nil {
		t.Fatal(err)
	}
	e.save(t, append([]Line{{Dir: "in", Data: []byte(quote(Prompt))}}, tr...), "omp-json.jsonl", "omp-session-json.jsonl")
}

// ompRun is one private environment of omp.
type ompRun struct {
	root, home, work string
	url              string
	env              []string
}

func ompEnv(t *testing.T, srv *fakemodel.Server) *ompRun {
	t.Helper()
	root := t.TempDir()
	e := &ompRun{root: root, home: filepath.Join(root, "home"), work: filepath.Join(root, "work"), url: srv.OpenAIBaseURL()}
	agentDir := filepath.Join(e.home, ".omp", "agent")
	for _, d := range []string{agentDir, e.work, filepath.Join(root, "tmp")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	models := "providers:\n  fake:\n    baseUrl: " + e.url + "\n    apiKey: test\n    api: openai-completions\n" +
		"    models:\n      - id: fake-model\n        name: Fake Model\n        contextWindow: 128000\n        maxTokens: 4096\n"
	if err := os.WriteFile(filepath.Join(agentDir, "models.yml"), []byte(models), 0o644); err != nil {
		t.Fatal(err)
	}
	e.env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + e.home,
		"XDG_CONFIG_HOME=" + filepath.Join(root, "config"),
		"XDG_DATA_HOME=" + filepath.Join(root, "data"),
		"XDG_STATE_HOME=" + filepath.Join(root, "state"),
		"XDG_CACHE_HOME=" + filepath.Join(root, "cache"),
		"TMPDIR=" + filepath.Join(root, "tmp"),
		"SHELL=/bin/bash",
		"LANG=C.UTF-8",
		"TERM=dumb",
		"NO_COLOR=1",
	}
	return e
}

var portRe = regexp.MustCompile(`127\.0\.0\.1:[0-9]+`)

// mask replaces what names this machine or this run's temp dirs with
// placeholders: the run's root (also in the dash-encoded form session
// folders use) and the fake server's port.
func (e *ompRun) mask(b []byte) []byte {
	s := string(b)
	s = strings.ReplaceAll(s, e.root, "/ROOT")
	s = strings.ReplaceAll(s, strings.ReplaceAll(strings.TrimPrefix(e.root, "/"), "/", "-"), "ROOT")
	s = portRe.ReplaceAllString(s, "127.0.0.1:PORT")
	return []byte(s)
}

// save writes the masked transcript and the run's one session file.
func (e *ompRun) save(t *testing.T, tr []Line, name, sessionName string) {
	t.Helper()
	for i := range tr {
		tr[i].Data = e.mask(tr[i].Data)
	}
	if err := WriteTranscript(filepath.Join("testdata", name), tr); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(e.home, ".omp", "agent", "sessions", "*", "*.jsonl"))
	if len(files) != 1 {
		t.Fatalf("%s: want one session file, found %v", name, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join("testdata", sessionName), e.mask(b), 0o644); err != nil {
		t.Fatal(err)
	}
}

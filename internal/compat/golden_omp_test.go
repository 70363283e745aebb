// The golden comparison of agentsh against omp's recorded transcripts: it
// runs in every `go test` (and so in CI); `make compat` runs omp's own
// client against agentsh besides.

package compat

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"agentsh/internal/fakemodel"
)

var agentshBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentsh-compat-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "compat: temp dir:", err)
		os.Exit(1)
	}
	agentshBin = filepath.Join(dir, "agentsh")
	build := exec.Command("go", "build", "-o", agentshBin, "agentsh/cmd/agentsh")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "compat: go build:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentshRun is one private environment of agentsh.
type agentshRun struct {
	root, data, work string
	env              []string
}

func newAgentshRun(t *testing.T, srv *fakemodel.Server) *agentshRun {
	t.Helper()
	root := t.TempDir()
	r := &agentshRun{root: root, data: filepath.Join(root, "data"), work: filepath.Join(root, "work")}
	for _, d := range []string{"home", "data", "config", "work"} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "PWD", k == "OLDPWD", k == "CDPATH", k == "BASH_ENV", k == "ENV",
			strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "AGENTSH_"), strings.HasPrefix(k, "OPENAI_"),
			strings.HasPrefix(k, "ANTHROPIC_"), strings.HasPrefix(k, "PI_"):
			continue
		}
		r.env = append(r.env, kv)
	}
	r.env = append(r.env, "HOME="+filepath.Join(root, "home"), "XDG_DATA_HOME="+r.data,
		"XDG_CONFIG_HOME="+filepath.Join(root, "config"), "PWD="+r.work)
	r.env = append(r.env, srv.OpenAIEnv()...)
	return r
}

func (r *agentshRun) command(ctx context.Context, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, agentshBin, args...)
	cmd.Dir, cmd.Env = r.work, r.env
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// sessionFile returns the lines of the run's one session file as a
// transcript of "out" lines.
func (r *agentshRun) sessionFile(t *testing.T) []Line {
	t.Helper()
	var files []string
	filepath.WalkDir(r.data, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) != 1 {
		t.Fatalf("want one session file under the data dir, found %v", files)
	}
	return fileLines(t, files[0])
}

func fileLines(t *testing.T, path string) []Line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var tr []Line
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for sc.Scan() {
		if len(strings.TrimSpace(sc.Text())) > 0 {
			tr = append(tr, outLine(sc.Bytes()))
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return tr
}

func golden(t *testing.T, name string) []Line {
	t.Helper()
	tr, err := ReadTranscript(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

func report(t *testing.T, what string, diffs []string) {
	t.Helper()
	if len(diffs) > 0 {
		t.Errorf("%s: agentsh's shapes do not contain omp's (%d differences):\n  %s", what, len(diffs), strings.Join(diffs, "\n  "))
	}
}

func isMessageEntry(m map[string]any) bool { return m["type"] == "message" }

// TestOmpGoldenRPC runs RPCScript against `agentsh --mode rpc` with
// ModelScript and compares its transcript, and its session file's message
// entries, with omp's.
func TestOmpGoldenRPC(t *testing.T) {
	// The script reads the server through an atomic: its handler runs on
	// another goroutine than the one that gets the server from New.
	var ref atomic.Pointer[fakemodel.Server]
	srv := fakemodel.New(t, ModelScript(ref.Load))
	ref.Store(srv)
	r := newAgentshRun(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tr, problems, err := RunRPC(ctx, r.command(ctx, "--mode", "rpc", "--model", "openai/fake-model"), RPCScript)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("agentsh: %s", p)
	}
	diffs, err := Compare(golden(t, "omp-rpc.jsonl"), tr, OmpOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "RPC transcript", diffs)
	diffs, err = Compare(fileLines(t, filepath.Join("testdata", "omp-session-rpc.jsonl")), r.sessionFile(t), OmpOnly, isMessageEntry)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "RPC session file, message entries", diffs)
	if t.Failed() {
		dumpTranscript(t, "agentsh-rpc.jsonl", tr)
	}
}

// TestOmpGoldenJSON runs `agentsh -p --mode json PROMPT` with ModelScript
// and compares its output, and its session file's message entries, with
// omp's.
func TestOmpGoldenJSON(t *testing.T) {
	// The script reads the server through an atomic: its handler runs on
	// another goroutine than the one that gets the server from New.
	var ref atomic.Pointer[fakemodel.Server]
	srv := fakemodel.New(t, ModelScript(ref.Load))
	ref.Store(srv)
	r := newAgentshRun(t, srv)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	tr, err := RunJSON(ctx, r.command(ctx, "-p", "--mode", "json", "--model", "openai/fake-model", Prompt))
	if err != nil {
		t.Errorf("agentsh: %v", err)
	}
	tr = append([]Line{{Dir: "in", Data: []byte(quote(Prompt))}}, tr...)
	diffs, err := Compare(golden(t, "omp-json.jsonl"), tr, OmpOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "JSON mode", diffs)
	diffs, err = Compare(fileLines(t, filepath.Join("testdata", "omp-session-json.jsonl")), r.sessionFile(t), OmpOnly, isMessageEntry)
	if err != nil {
		t.Fatal(err)
	}
	report(t, "JSON mode session file, message entries", diffs)
	if t.Failed() {
		dumpTranscript(t, "agentsh-json.jsonl", tr)
	}
}

// dumpTranscript keeps agentsh's transcript where AGENTSH_COMPAT_DUMP
// says, for reading next to omp's.
func dumpTranscript(t *testing.T, name string, tr []Line) {
	dir := os.Getenv("AGENTSH_COMPAT_DUMP")
	if dir == "" {
		return
	}
	if err := WriteTranscript(filepath.Join(dir, name), tr); err != nil {
		t.Log(err)
	}
}

// The recorded transcripts hold what the comparison needs: omp's RPC
// transcript answers every command of the script.
func TestOmpGoldenIsComplete(t *testing.T) {
	tr := golden(t, "omp-rpc.jsonl")
	ids := map[string]bool{}
	for _, l := range tr {
		var m map[string]any
		if json.Unmarshal(l.Data, &m) == nil && l.Dir == "out" && m["type"] == "response" {
			ids[fmt.Sprint(m["id"])] = true
		}
	}
	for _, id := range []string{"c1", "c2", "c3", "c4", "c5", "c6", "c7"} {
		if !ids[id] {
			t.Errorf("omp-rpc.jsonl has no response to %s", id)
		}
	}
}

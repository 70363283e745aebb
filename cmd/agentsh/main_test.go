package main

// End-to-end tests of the agentsh binary: TestMain builds it once (without
// -race, so the 1 GB run stays fast) and every test runs it as a subprocess
// in a private environment (HOME, XDG_DATA_HOME, XDG_CONFIG_HOME and the
// working directory are fresh temp dirs). The tests assert what a user sees:
// stdout, stderr, the exit status, files on disk and the processes left on
// the machine. There are no timing assertions; every subprocess runs under a
// generous hang guard instead.

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentsh/internal/testkit"
)

// hangGuard bounds every agentsh invocation. It only catches hangs; no test
// asserts how long anything took.
const hangGuard = 120 * time.Second

// markerVar is the per-shell environment marker agentsh gives every process
// of a run; the tests scan /proc for it.
const markerVar = "AGENTSH_SHELL_MARK"

var agentshBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "agentsh-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir:", err)
		os.Exit(1)
	}
	agentshBin = filepath.Join(dir, "agentsh")
	build := exec.Command("go", "build", "-o", agentshBin, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "e2e: go build:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sandbox is one private user environment.
type sandbox struct {
	t      *testing.T
	root   string
	home   string
	data   string // XDG_DATA_HOME
	config string // XDG_CONFIG_HOME
	work   string // cwd of agentsh
}

func newSandbox(t *testing.T) *sandbox {
	t.Helper()
	root := t.TempDir()
	s := &sandbox{t: t, root: root,
		home: filepath.Join(root, "home"), data: filepath.Join(root, "data"),
		config: filepath.Join(root, "config"), work: filepath.Join(root, "work")}
	for _, d := range []string{s.home, s.data, s.config, s.work} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// env is the inherited environment minus everything that could leak the
// developer's own agentsh or shell configuration, plus the sandbox dirs.
func (s *sandbox) env(dir string, extra ...string) []string {
	var out []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case k == "HOME", k == "PWD", k == "OLDPWD", k == "CDPATH", k == "BASH_ENV", k == "ENV",
			strings.HasPrefix(k, "XDG_"), strings.HasPrefix(k, "AGENTSH_"), strings.HasPrefix(k, "PI_"):
			continue
		}
		out = append(out, kv)
	}
	out = append(out, "HOME="+s.home, "XDG_DATA_HOME="+s.data, "XDG_CONFIG_HOME="+s.config, "PWD="+dir)
	return append(out, extra...)
}

type result struct {
	stdout string
	stderr string
	code   int
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %q\nstderr: %q", r.code, clip(r.stdout), clip(r.stderr))
}

func clip(s string) string {
	if len(s) > 2000 {
		return s[:1000] + " … " + s[len(s)-1000:]
	}
	return s
}

// command prepares agentsh under the hang guard; the guard sends SIGTERM (so
// agentsh can still clean up its shells) and SIGKILL 10 s later.
func (s *sandbox) command(ctx context.Context, dir string, extraEnv []string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, agentshBin, args...)
	cmd.Dir = dir
	cmd.Env = s.env(dir, extraEnv...)
	cmd.Stdin = nil
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

func exitCode(t *testing.T, err error) int {
	t.Helper()
	if err == nil {
		return 0
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		t.Fatalf("agentsh did not run: %v", err)
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		t.Fatalf("agentsh was killed by %v", ws.Signal())
	}
	return ee.ExitCode()
}

// runEnv runs agentsh in dir with extra environment entries.
func (s *sandbox) runEnv(dir string, extraEnv []string, args ...string) result {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var stdout, stderr bytes.Buffer
	cmd := s.command(ctx, dir, extraEnv, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		s.t.Fatalf("agentsh %q hung (killed by the %v hang guard); stdout %q, stderr %q",
			args, hangGuard, clip(stdout.String()), clip(stderr.String()))
	}
	return result{stdout: stdout.String(), stderr: stderr.String(), code: exitCode(s.t, err)}
}

func (s *sandbox) run(args ...string) result {
	s.t.Helper()
	return s.runEnv(s.work, nil, args...)
}

// want checks the whole user-visible outcome.
func want(t *testing.T, r result, stdout, stderr string, code int) {
	t.Helper()
	if r.stdout != stdout || r.stderr != stderr || r.code != code {
		t.Errorf("got %v\nwant exit %d\nstdout: %q\nstderr: %q", r, code, clip(stdout), clip(stderr))
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// seqOutput is what `seq 1 n` prints.
func seqOutput(n int) []byte {
	var b bytes.Buffer
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func sha(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// jsonResult is the --json output.
type jsonResult struct {
	Content []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"content"`
	IsError  bool `json:"isError"`
	ExitCode *int `json:"exitCode"`
	Details  struct {
		ExitCode       *int    `json:"exitCode"`
		Cancelled      bool    `json:"cancelled"`
		TimeoutSeconds float64 `json:"timeoutSeconds"`
		Meta           *struct {
			Truncation *struct {
				Direction   string `json:"direction"`
				TruncatedBy string `json:"truncatedBy"`
				TotalLines  int    `json:"totalLines"`
				TotalBytes  int    `json:"totalBytes"`
				OutputLines int    `json:"outputLines"`
				OutputBytes int    `json:"outputBytes"`
				ShownRange  struct {
					Start int `json:"start"`
					End   int `json:"end"`
				} `json:"shownRange"`
				ArtifactID *string `json:"artifactId"`
			} `json:"truncation"`
		} `json:"meta"`
	} `json:"details"`
}

func parseJSON(t *testing.T, r result) jsonResult {
	t.Helper()
	var j jsonResult
	dec := json.NewDecoder(strings.NewReader(r.stdout))
	if err := dec.Decode(&j); err != nil {
		t.Fatalf("--json output does not parse: %v\n%v", err, r)
	}
	if dec.More() {
		t.Fatalf("--json printed more than one JSON value:\n%v", r)
	}
	if len(j.Content) != 1 || j.Content[0].Type != "text" {
		t.Fatalf("want exactly one text content block, got %+v", j.Content)
	}
	return j
}

// ---- processes ----------------------------------------------------------

// procState returns the state letter of pid from /proc/<pid>/stat.
func procState(pid string) (byte, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return 0, false
	}
	return b[i+2], true
}

// markedProcs lists live (non-zombie) processes whose environment holds
// AGENTSH_SHELL_MARK=mark, as "pid cmdline" strings.
func markedProcs(t *testing.T, mark string) []string {
	t.Helper()
	if mark == "" {
		t.Fatal("empty marker: the scan would match nothing")
	}
	entry := []byte(markerVar + "=" + mark)
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatalf("read /proc: %v", err)
	}
	var out []string
	for _, e := range ents {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		if st, ok := procState(pid); !ok || st == 'Z' || st == 'X' {
			continue
		}
		env, err := os.ReadFile("/proc/" + pid + "/environ")
		if err != nil {
			continue
		}
		for _, kv := range bytes.Split(env, []byte{0}) {
			if bytes.Equal(kv, entry) {
				cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
				out = append(out, pid+" "+strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " "))
				break
			}
		}
	}
	return out
}

// procsWithCmdline lists live processes whose argv is exactly args.
func procsWithCmdline(args ...string) []string {
	want := []byte(strings.Join(args, "\x00") + "\x00")
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		if st, ok := procState(pid); !ok || st == 'Z' || st == 'X' {
			continue
		}
		if b, err := os.ReadFile("/proc/" + pid + "/cmdline"); err == nil && bytes.Equal(b, want) {
			out = append(out, pid)
		}
	}
	return out
}

var hexMarker = regexp.MustCompile(`^[0-9a-f]{8,}$`)

// firstLineMarker extracts the marker the command printed as its first line.
func firstLineMarker(t *testing.T, text string) string {
	t.Helper()
	mark, _, _ := strings.Cut(text, "\n")
	if !hexMarker.MatchString(mark) {
		t.Fatalf("first output line %q is not a run marker (is %s still exported to commands?)", mark, markerVar)
	}
	return mark
}

func assertNoMarkedProcs(t *testing.T, mark string) {
	t.Helper()
	if left := markedProcs(t, mark); len(left) > 0 {
		t.Errorf("processes of the run survived agentsh's exit:\n%s", strings.Join(left, "\n"))
	}
}

// waitFor is testkit.Eventually bounded by ctx's deadline, the hang guard of
// the processes the test started.
func waitFor(t *testing.T, ctx context.Context, what string, cond testkit.Cond) {
	t.Helper()
	bound := time.Duration(0)
	if d, ok := ctx.Deadline(); ok {
		bound = time.Until(d)
	}
	testkit.Eventually(t, bound, what, cond)
}

// TestProcScanFindsMarkedProcess proves the /proc scan used by the leak
// checks below really sees a live process carrying a marker.
func TestProcScanFindsMarkedProcess(t *testing.T) {
	t.Parallel()
	mark := fmt.Sprintf("e2eselftest%d", time.Now().UnixNano())
	cmd := exec.Command("sleep", "60")
	cmd.Env = append(os.Environ(), markerVar+"="+mark)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := markedProcs(t, mark)
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if len(found) != 1 || !strings.HasSuffix(found[0], " sleep 60") {
		t.Fatalf("scan found %q, want exactly the marked sleep", found)
	}
	if left := markedProcs(t, mark); len(left) != 0 {
		t.Fatalf("scan still reports a reaped process: %q", left)
	}
}

// ---- basic results --------------------------------------------------------

func TestExecBasicResults(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	cases := []struct {
		name, cmd, stdout string
		code              int
	}{
		{"echo", "echo hi", "hi\n", 0},
		// spec §1.6: "<text>\n\nCommand exited with code N", and the text is
		// "out\nerr\n" (stderr merged in order).
		{"nonzero", "echo out; echo err >&2; exit 3", "out\nerr\n\n\nCommand exited with code 3\n", 3},
		{"no output", "true", "(no output)\n", 0},
		{"no output nonzero", "exit 3", "(no output)\n\nCommand exited with code 3\n", 3},
		{"unicode", "printf 'héllo ✓ 日本\\n'", "héllo ✓ 日本\n", 0},
		// exec has no jobs, so no one could type into a terminal: stdin
		// stays /dev/null and a reading command ends at once.
		{"stdin reads EOF", `cat; read -p "go? " a; echo "rc=$?"`, "rc=1\n", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want(t, s.run("exec", "--", c.cmd), c.stdout, "", c.code)
		})
	}
	t.Run("args joined", func(t *testing.T) {
		want(t, s.run("exec", "--", "echo", "a", "b"), "a b\n", "", 0)
	})
	t.Run("cwd is the invocation dir", func(t *testing.T) {
		want(t, s.run("exec", "--", "pwd"), s.work+"\n", "", 0)
	})
}

func TestExecJSON(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)

	t.Run("success", func(t *testing.T) {
		r := s.run("exec", "--json", "--", "echo hi")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%v", r)
		}
		j := parseJSON(t, r)
		if j.Content[0].Text != "hi\n" || j.IsError || j.ExitCode == nil || *j.ExitCode != 0 || j.Details.Meta != nil {
			t.Errorf("unexpected result %+v\n%v", j, r)
		}
	})

	t.Run("error", func(t *testing.T) {
		r := s.run("exec", "--json", "--", "echo x; exit 3")
		if r.code != 3 || r.stderr != "" {
			t.Fatalf("%v", r)
		}
		j := parseJSON(t, r)
		if j.Content[0].Text != "x\n\n\nCommand exited with code 3" || !j.IsError || j.ExitCode == nil || *j.ExitCode != 3 {
			t.Errorf("unexpected result %+v\n%v", j, r)
		}
	})

	t.Run("truncated", func(t *testing.T) {
		full := seqOutput(100000)
		r := s.run("exec", "--json", "--", "seq 1 100000")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%v", r)
		}
		j := parseJSON(t, r)
		if j.IsError || j.ExitCode == nil || *j.ExitCode != 0 {
			t.Errorf("isError %v exitCode %v, want false 0", j.IsError, j.ExitCode)
		}
		if j.Details.Meta == nil || j.Details.Meta.Truncation == nil {
			t.Fatalf("no details.meta.truncation:\n%v", r)
		}
		tr := j.Details.Meta.Truncation
		if tr.Direction != "tail" || tr.TruncatedBy != "bytes" || tr.TotalLines != 100000 || tr.TotalBytes != len(full) ||
			tr.TotalBytes != 588895 || tr.ShownRange.End != 100000 || tr.OutputBytes != 51200 {
			t.Errorf("truncation = %+v", *tr)
		}
		if tr.ArtifactID == nil || *tr.ArtifactID != "0" {
			t.Errorf("artifactId = %v, want \"0\"", tr.ArtifactID)
		}
		start := 100000 - tr.OutputLines + 1
		if tr.ShownRange.Start != start {
			t.Errorf("shownRange.start = %d, want %d (from outputLines %d)", tr.ShownRange.Start, start, tr.OutputLines)
		}
		kept := string(full[len(full)-51200:])
		if tr.OutputLines != strings.Count(kept, "\n") {
			t.Errorf("outputLines = %d, the kept 51200 bytes hold %d lines", tr.OutputLines, strings.Count(kept, "\n"))
		}
		notice := fmt.Sprintf("[Showing lines %d-100000 of 100000 (50.0KB limit). Full: artifact://0]", start)
		if text := j.Content[0].Text; text != kept+"\n\n"+notice {
			t.Errorf("text ends with %q, want the last 51200 bytes of the output then %q", text[max(0, len(text)-200):], "\n\n"+notice)
		}
	})
}

// ---- artifacts ------------------------------------------------------------

// encodedCwd is the session folder name of a directory outside HOME
// ("/srv/x" → "--srv-x--").
func encodedCwd(dir string) string {
	return "--" + regexp.MustCompile(`[^A-Za-z0-9._-]`).ReplaceAllString(strings.TrimPrefix(dir, "/"), "-") + "--"
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatalf("read %s: %v", dir, err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestArtifacts(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	full := seqOutput(100000)
	artDir := filepath.Join(s.data, "agentsh", "sessions", encodedCwd(s.work), "exec")
	noticeRe := regexp.MustCompile(`\n\n\[Showing lines (\d+)-100000 of 100000 \(50\.0KB limit\)\. Full: artifact://(\d+)\]\n$`)

	truncatedRun := func(wantID string) {
		t.Helper()
		r := s.run("exec", "--", "seq 1 100000")
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%v", r)
		}
		m := noticeRe.FindStringSubmatch(r.stdout)
		if m == nil {
			t.Fatalf("no truncation notice with an artifact link:\n%v", r)
		}
		if m[2] != wantID {
			t.Fatalf("artifact://%s, want artifact://%s", m[2], wantID)
		}
		if shown := strings.TrimSuffix(r.stdout, m[0]); shown != string(full[len(full)-51200:]) {
			t.Errorf("the shown text (%d bytes) is not the last 51200 bytes of the output:\n%v", len(shown), r)
		}
	}
	checkArtifact := func(ref string) {
		t.Helper()
		r := s.run("artifact", ref)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("artifact %s: %v", ref, r)
		}
		if len(r.stdout) != len(full) || sha([]byte(r.stdout)) != sha(full) {
			t.Errorf("artifact %s: %d bytes sha256 %s, want the %d bytes of `seq 1 100000` (sha256 %s)",
				ref, len(r.stdout), sha([]byte(r.stdout)), len(full), sha(full))
		}
	}

	truncatedRun("0")
	checkArtifact("0")
	checkArtifact("artifact://0")
	want(t, s.run("artifact", "7"), "", "agentsh: Artifact 7 not found. Available: 0\n", 1)

	// A run that fits does not leave a file or burn a visible id.
	want(t, s.run("exec", "--", "echo small"), "small\n", "", 0)
	if got := listDir(t, artDir); strings.Join(got, " ") != "0.bash.log" {
		t.Errorf("after a small run the artifact folder holds %q, want only 0.bash.log", got)
	}

	truncatedRun("1")
	checkArtifact("1")
	if got := listDir(t, artDir); strings.Join(got, " ") != "0.bash.log 1.bash.log" {
		t.Errorf("artifact folder holds %q, want 0.bash.log 1.bash.log", got)
	}
	for _, name := range []string{"0.bash.log", "1.bash.log"} {
		fi, err := os.Stat(filepath.Join(artDir, name))
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode() != 0o600 {
			t.Errorf("%s has mode %v, want -rw-------", name, fi.Mode())
		}
		if fi.Size() != int64(len(full)) {
			t.Errorf("%s has %d bytes, want %d", name, fi.Size(), len(full))
		}
	}
	want(t, s.run("artifact", "7"), "", "agentsh: Artifact 7 not found. Available: 0, 1\n", 1)
	want(t, s.run("artifact", "artifact://7"), "", "agentsh: Artifact 7 not found. Available: 0, 1\n", 1)

	t.Run("refusals", func(t *testing.T) {
		// A real file where a traversal would land, so a lax resolver would
		// have something to print.
		writeFile(t, filepath.Join(artDir, "..", "x"), "secret\n")
		for _, ref := range []string{"../../etc/passwd", "1/../x", "-1", "artifact://../../etc/passwd", "artifact://1/../x", "artifact://-1"} {
			id := strings.TrimPrefix(ref, "artifact://")
			want(t, s.run("artifact", ref), "", "agentsh: artifact:// ID must be numeric, got: "+id+"\n", 1)
		}
	})

	t.Run("usage", func(t *testing.T) {
		r := s.run("artifact")
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "usage") {
			t.Errorf("artifact without an id: %v", r)
		}
	})

	t.Run("per-directory folders", func(t *testing.T) {
		other := filepath.Join(s.root, "other")
		if err := os.Mkdir(other, 0o755); err != nil {
			t.Fatal(err)
		}
		want(t, s.runEnv(other, nil, "artifact", "0"), "", "agentsh: Artifact 0 not found. Available: none\n", 1)
		// exec --cwd does not move the artifact folder: it stays the one of
		// the invocation directory.
		r := s.runEnv(other, nil, "exec", "--cwd", s.work, "--", "seq 1 100000")
		if m := noticeRe.FindStringSubmatch(r.stdout); r.code != 0 || m == nil || m[2] != "0" {
			t.Errorf("first truncated run in another directory: %v", r)
		}
	})
}

// ---- bad input ------------------------------------------------------------

func TestExecBadInput(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, "afile"), "x\n")
	if err := os.Mkdir(filepath.Join(s.work, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}

	t.Run("cwd missing", func(t *testing.T) {
		want(t, s.run("exec", "--cwd", "nope", "--", "echo x"),
			"Working directory does not exist: "+filepath.Join(s.work, "nope")+"\n", "", 1)
		abs := filepath.Join(s.root, "gone")
		want(t, s.run("exec", "--cwd", abs, "--", "echo x"), "Working directory does not exist: "+abs+"\n", "", 1)
	})
	t.Run("cwd is a file", func(t *testing.T) {
		want(t, s.run("exec", "--cwd", "afile", "--", "echo x"),
			"Working directory is not a directory: "+filepath.Join(s.work, "afile")+"\n", "", 1)
	})
	t.Run("cwd relative", func(t *testing.T) {
		want(t, s.run("exec", "--cwd", "sub", "--", "pwd"), filepath.Join(s.work, "sub")+"\n", "", 0)
	})
	t.Run("timeout 0 clamps to 1s", func(t *testing.T) {
		r := s.run("exec", "--timeout", "0", "--", `echo "$AGENTSH_SHELL_MARK"; echo before; sleep 3`)
		if r.code != 1 || r.stderr != "" {
			t.Fatalf("%v", r)
		}
		first, rest, _ := strings.Cut(r.stdout, "\n")
		if first != "[Command timed out after 1 seconds]" {
			t.Fatalf("first line %q, want the timeout annotation\n%v", first, r)
		}
		mark := firstLineMarker(t, rest)
		if rest != mark+"\nbefore\n" {
			t.Errorf("output after the annotation %q, want the marker and \"before\"", rest)
		}
		assertNoMarkedProcs(t, mark)
	})
	t.Run("timeout negative clamps to 1s", func(t *testing.T) {
		want(t, s.run("exec", "--timeout", "-5", "--", "echo ok"), "ok\n", "", 0)
		want(t, s.run("exec", "--timeout", "-5", "--", "sleep 3"), "[Command timed out after 1 seconds]\n", "", 1)
	})
	t.Run("timeout huge clamps to 3600s", func(t *testing.T) {
		r := s.run("exec", "--json", "--timeout", "99999", "--", "echo ok")
		j := parseJSON(t, r)
		if r.code != 0 || j.Content[0].Text != "ok\n" || j.IsError || j.Details.TimeoutSeconds != 3600 {
			t.Errorf("got %+v\n%v", j, r)
		}
	})
	t.Run("timeout not a number", func(t *testing.T) {
		r := s.run("exec", "--timeout", "abc", "--", "echo ok")
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `invalid value "abc" for flag -timeout`) {
			t.Errorf("%v", r)
		}
	})
	t.Run("head not a number", func(t *testing.T) {
		r := s.run("exec", "--head", "x", "--", "echo ok")
		if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, `invalid value "x" for flag -head`) {
			t.Errorf("%v", r)
		}
	})
	t.Run("empty command", func(t *testing.T) {
		want(t, s.run("exec", "--", ""), "Command must not be empty\n", "", 1)
		want(t, s.run("exec", "--", " \n\t "), "Command must not be empty\n", "", 1)
	})
	t.Run("missing command", func(t *testing.T) {
		for _, args := range [][]string{{"exec", "--"}, {"exec"}, {"exec", "--json", "--"}} {
			r := s.run(args...)
			if r.code != 2 || r.stdout != "" || !strings.Contains(r.stderr, "missing COMMAND") {
				t.Errorf("%q: %v", args, r)
			}
		}
	})
	t.Run("no subcommand", func(t *testing.T) {
		// The quick start's `go run ./cmd/agentsh` shows the usage, not an error.
		r := s.run()
		if r.code != 0 || r.stderr != "" || !strings.Contains(r.stdout, "agentsh exec") {
			t.Errorf("%v", r)
		}
		r = s.run("frobnicate")
		if r.code != 2 || !strings.Contains(r.stderr, `unknown command "frobnicate"`) {
			t.Errorf("%v", r)
		}
	})
}

// ---- head / tail ----------------------------------------------------------

func TestExecHeadTail(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	cases := []struct {
		name   string
		args   []string
		stdout string
		repeat int // early-stop cases race the producer; repeat to catch it
	}{
		{"pipe head", []string{"--", "seq 1 10 | head -n 3"}, "1\n2\n3\n", 1},
		{"pipe tail", []string{"--", "seq 1 10 | tail -n 2"}, "9\n10\n", 1},
		{"flag tail", []string{"--tail", "2", "--", "seq 1 10"}, "9\n10\n", 1},
		{"flag head", []string{"--head", "2", "--", "seq 1 10"}, "1\n2\n", 1},
		{"flag overrides pipe", []string{"--head", "1", "--", "seq 1 10 | head -n 3"}, "1\n", 1},
		{"or list untouched", []string{"--", "seq 1 3 || head -n 1"}, "1\n2\n3\n", 1},
		{"quoted untouched", []string{"--", "echo 'a | head -n 1'"}, "a | head -n 1\n", 1},
		{"endless producer", []string{"--", "yes | head -n 2"}, "y\ny\n", 3},
		{"big producer", []string{"--", "seq 1 100000 | head -n 3"}, "1\n2\n3\n", 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for i := 0; i < c.repeat; i++ {
				r := s.run(append([]string{"exec"}, c.args...)...)
				if r.stdout != c.stdout || r.stderr != "" || r.code != 0 {
					t.Fatalf("run %d: got %v\nwant exit 0, stdout %q", i+1, r, c.stdout)
				}
			}
		})
	}
}

// ---- output sanitizing ----------------------------------------------------

func TestExecSanitizesOutput(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	cases := []struct{ name, cmd, stdout string }{
		{"ansi colors", `printf '\033[31mred\033[0m\n'`, "red\n"},
		{"ansi cursor and osc", `printf '\033[2K\033[1Ga\033]0;title\007b\n'`, "ab\n"},
		{"crlf", `printf 'a\r\nb\r\n'`, "a\nb\n"},
		{"lone cr overwrites the line", `printf 'a\rb\n'`, "b\n"},
		{"progress bar is one line", `echo get; for i in 1 2 3 4 5; do printf '\r%d0%%' $i; done; printf '\r\033[Kdone\n'`, "get\ndone\n"},
		{"tab kept", `printf 'a\tb\n'`, "a\tb\n"},
		{"nul dropped", `printf 'a\0b\n'`, "ab\n"},
		{"invalid utf-8", `printf 'a\xffb\n'`, "a\uFFFDb\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			want(t, s.run("exec", "--", c.cmd), c.stdout, "", 0)
		})
	}
	t.Run("json", func(t *testing.T) {
		r := s.run("exec", "--json", "--", `printf 'a\xffb\0\033[1mc\n'`)
		if j := parseJSON(t, r); j.Content[0].Text != "a\uFFFDbc\n" {
			t.Errorf("text %q, want %q", j.Content[0].Text, "a\uFFFDbc\n")
		}
	})
}

// ---- settings -------------------------------------------------------------

func TestSettings(t *testing.T) {
	t.Parallel()

	t.Run("malformed global file", func(t *testing.T) {
		s := newSandbox(t)
		path := filepath.Join(s.config, "agentsh", "settings.json")
		writeFile(t, path, "{\n  \"shell\": {\n    \"prefix\": \"x\",\n  }\n}\n")
		r := s.run("exec", "--", "echo hi")
		if r.code != 1 || r.stdout != "" || !strings.HasPrefix(r.stderr, "agentsh: settings: "+path+":4:3: ") ||
			strings.Count(r.stderr, "\n") != 1 {
			t.Errorf("%v\nwant exit 1 and one line naming %s:4:3", r, path)
		}
	})
	t.Run("wrong type in project file", func(t *testing.T) {
		s := newSandbox(t)
		path := filepath.Join(s.work, ".agentsh", "settings.json")
		writeFile(t, path, "{\n  \"shell\": {\n    \"env\": {\"A\": 1}\n  }\n}\n")
		want(t, s.run("exec", "--", "echo hi"), "",
			"agentsh: settings: "+path+":3:18: shell.env.A: expected string, got number\n", 1)
	})
	t.Run("prefix from env", func(t *testing.T) {
		s := newSandbox(t)
		want(t, s.runEnv(s.work, []string{"AGENTSH_SHELL_PREFIX=echo"}, "exec", "--", "hi"), "hi\n", "", 0)
		want(t, s.runEnv(s.work, []string{"AGENTSH_SHELL_PREFIX=echo PRE"}, "exec", "--", "hi"), "PRE hi\n", "", 0)
	})
	t.Run("prefix from settings, env wins", func(t *testing.T) {
		s := newSandbox(t)
		writeFile(t, filepath.Join(s.config, "agentsh", "settings.json"), `{"shell": {"prefix": "echo CFG"}}`)
		want(t, s.run("exec", "--", "hi"), "CFG hi\n", "", 0)
		want(t, s.runEnv(s.work, []string{"AGENTSH_SHELL_PREFIX=echo PRE"}, "exec", "--", "hi"), "PRE hi\n", "", 0)
	})
	t.Run("shell env from project file over global", func(t *testing.T) {
		s := newSandbox(t)
		writeFile(t, filepath.Join(s.config, "agentsh", "settings.json"),
			`{"shell": {"env": {"AGSH_A": "global", "AGSH_B": "global-b"}}}`)
		writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"),
			`{"shell": {"env": {"AGSH_A": "project value"}}}`)
		want(t, s.run("exec", "--trust-project", "--", `echo "[$AGSH_A] [$AGSH_B]"`), "[project value] [global-b]\n", "", 0)
	})
}

// ---- rc snapshot ----------------------------------------------------------

const debianGuard = `# ~/.bashrc: executed by bash(1) for non-login shells.
# If not running interactively, don't do anything
case $- in
    *i*) ;;
      *) return;;
esac
`

func TestSnapshot(t *testing.T) {
	t.Parallel()

	t.Run("alias function shopt path", func(t *testing.T) {
		s := newSandbox(t)
		bin := filepath.Join(s.home, "mybin")
		writeFile(t, filepath.Join(bin, "agsh-mytool"), "#!/bin/sh\necho mytool-ran\n")
		if err := os.Chmod(filepath.Join(bin, "agsh-mytool"), 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(s.home, ".bashrc"), debianGuard+`echo RC-NOISE
alias agsh_alias='echo alias-ran'
agsh_func() { echo "func-ran $1"; }
shopt -s globstar
export PATH="$HOME/mybin:$PATH"
`)
		r := s.run("exec", "--", `agsh_alias; agsh_func x; shopt globstar; agsh-mytool; type agsh_alias; type -t agsh_func; echo "$PATH"`)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%v", r)
		}
		lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
		if len(lines) != 7 {
			t.Fatalf("want 7 lines, got %v", r)
		}
		check := func(i int, ok bool, what string) {
			if !ok {
				t.Errorf("line %d %q: %s\n%v", i+1, lines[i], what, r)
			}
		}
		check(0, lines[0] == "alias-ran", "alias from .bashrc")
		check(1, lines[1] == "func-ran x", "function from .bashrc")
		check(2, regexp.MustCompile(`^globstar\s+on$`).MatchString(lines[2]), "shopt globstar from .bashrc")
		check(3, lines[3] == "mytool-ran", "PATH entry from .bashrc")
		check(4, lines[4] == "agsh_alias is aliased to `echo alias-ran'", "type of the alias")
		check(5, lines[5] == "function", "type of the function")
		check(6, strings.HasPrefix(lines[6], bin+":"), "PATH starts with the .bashrc entry")
	})

	t.Run("hanging rc", func(t *testing.T) {
		s := newSandbox(t)
		// Longer than the hang guard, so an rc that blocks exec fails the test.
		writeFile(t, filepath.Join(s.home, ".bashrc"), "sleep 987.25\nalias agsh_late='echo late'\n")
		want(t, s.run("exec", "--", "echo still"), "still\n", "", 0)
		if left := procsWithCmdline("sleep", "987.25"); len(left) > 0 {
			t.Errorf("the .bashrc's sleep survived agentsh: pids %v", left)
		}
	})

	t.Run("failing rc", func(t *testing.T) {
		s := newSandbox(t)
		writeFile(t, filepath.Join(s.home, ".bashrc"), "exit 1\n")
		want(t, s.run("exec", "--", "echo still"), "still\n", "", 0)
	})
}

// ---- signals and leftovers -----------------------------------------------

func TestSignalCancelsRun(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		sig    syscall.Signal
		extra  string // escapees started before the foreground sleep
		sleeps int    // `sleep 1000` processes to see before signalling
	}{
		{"sigint", syscall.SIGINT, "", 1},
		{"sigint escapees", syscall.SIGINT, "(sleep 1000 &); setsid sleep 1000 & ", 3},
		{"sigterm", syscall.SIGTERM, "", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := newSandbox(t)
			ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
			defer cancel()
			// exec prints only at the end, so readiness is signalled by a file.
			script := `echo "$AGENTSH_SHELL_MARK"; echo started; ` + c.extra +
				`printf '%s\n' "$AGENTSH_SHELL_MARK" > ready.tmp && mv ready.tmp ready; sleep 1000`
			var stdout, stderr bytes.Buffer
			cmd := s.command(ctx, s.work, nil, "exec", "--", script)
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			waited := false
			defer func() {
				if !waited {
					_ = cmd.Process.Kill()
					_ = cmd.Wait()
				}
			}()
			var mark string
			waitFor(t, ctx, "the command to start", func() (bool, string) {
				b, err := os.ReadFile(filepath.Join(s.work, "ready"))
				mark = strings.TrimSpace(string(b))
				return err == nil, fmt.Sprint(err)
			})
			if !hexMarker.MatchString(mark) {
				t.Fatalf("marker %q", mark)
			}
			// Positive control: the scan sees the run's sleeps before the signal.
			waitFor(t, ctx, fmt.Sprintf("%d marked sleep processes", c.sleeps), func() (bool, string) {
				n := 0
				procs := markedProcs(t, mark)
				for _, p := range procs {
					if strings.HasSuffix(p, " sleep 1000") {
						n++
					}
				}
				return n >= c.sleeps, "marked processes:\n" + strings.Join(procs, "\n")
			})
			if err := cmd.Process.Signal(c.sig); err != nil {
				t.Fatal(err)
			}
			err := cmd.Wait()
			waited = true
			if ctx.Err() != nil {
				t.Fatalf("agentsh did not exit after %v (hang guard); stdout %q", c.sig, stdout.String())
			}
			r := result{stdout: stdout.String(), stderr: stderr.String(), code: exitCode(t, err)}
			want(t, r, "[Command cancelled]\n"+mark+"\nstarted\n", "", 1)
			assertNoMarkedProcs(t, mark)
		})
	}
}

func TestNoShellsLeftAfterNormalRun(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	t.Run("plain", func(t *testing.T) {
		r := s.run("exec", "--", `echo "$AGENTSH_SHELL_MARK"`)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%v", r)
		}
		mark := firstLineMarker(t, r.stdout)
		want(t, r, mark+"\n", "", 0)
		assertNoMarkedProcs(t, mark)
	})
	t.Run("background job", func(t *testing.T) {
		// The job holds the output open; the call still returns, and the job
		// ends with agentsh.
		r := s.run("exec", "--", `echo "$AGENTSH_SHELL_MARK"; sleep 1000 & (sleep 1000 &); echo bg`)
		if r.code != 0 || r.stderr != "" {
			t.Fatalf("%v", r)
		}
		mark := firstLineMarker(t, r.stdout)
		want(t, r, mark+"\nbg\n", "", 0)
		assertNoMarkedProcs(t, mark)
	})
	t.Run("shell exits", func(t *testing.T) {
		r := s.run("exec", "--", `echo "$AGENTSH_SHELL_MARK"; exit 4`)
		mark := firstLineMarker(t, r.stdout)
		want(t, r, mark+"\n\n\nCommand exited with code 4\n", "", 4)
		assertNoMarkedProcs(t, mark)
	})
}

// ---- 1 GB -----------------------------------------------------------------

// gigaStream is `yes 0123456789abcdef | head -c 1000000000`.
const (
	gigaLine = "0123456789abcdef\n"
	gigaSize = 1000000000
)

func gigaByte(i int) byte { return gigaLine[i%len(gigaLine)] }

func gigaSHA() string {
	h := sha256.New()
	chunk := bytes.Repeat([]byte(gigaLine), (1<<20)/len(gigaLine))
	n := 0
	for n+len(chunk) <= gigaSize {
		h.Write(chunk)
		n += len(chunk)
	}
	h.Write(chunk[:gigaSize-n])
	return hex.EncodeToString(h.Sum(nil))
}

func TestExecOneGigabyte(t *testing.T) {
	if testing.Short() {
		t.Skip("1 GB of output; skipped with -short")
	}
	t.Parallel()
	wantSHA := make(chan string, 1)
	go func() { wantSHA <- gigaSHA() }()

	s := newSandbox(t)
	r := s.run("exec", "--", "yes 0123456789abcdef | head -c 1000000000")
	if r.code != 0 || r.stderr != "" {
		t.Fatalf("%v", r)
	}
	totalLines := (gigaSize + len(gigaLine) - 1) / len(gigaLine) // the last line is partial
	m := regexp.MustCompile(fmt.Sprintf(`\n\n\[Showing lines (\d+)-%d of %d \(50\.0KB limit\)\. Full: artifact://0\]\n$`,
		totalLines, totalLines)).FindStringSubmatch(r.stdout)
	if m == nil {
		t.Fatalf("no truncation notice with artifact://0:\n%v", r)
	}
	shown := strings.TrimSuffix(r.stdout, m[0])
	tail := make([]byte, 51200)
	for i := range tail {
		tail[i] = gigaByte(gigaSize - len(tail) + i)
	}
	if shown != string(tail) {
		t.Errorf("shown text (%d bytes) is not the last 51200 bytes of the stream", len(shown))
	}

	path := filepath.Join(s.data, "agentsh", "sessions", encodedCwd(s.work), "exec", "0.bash.log")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		t.Fatal(err)
	}
	got, exp := hex.EncodeToString(h.Sum(nil)), <-wantSHA
	if n != gigaSize || got != exp {
		t.Errorf("artifact: %d bytes sha256 %s, want %d bytes sha256 %s", n, got, gigaSize, exp)
	}
}

// With the interceptor on, `agentsh exec` blocks what a model's call would
// be blocked for, since exec has the agent's tools; filters and writes to
// /dev/null still run.
func TestExecInterceptor(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"bashInterceptor": {"enabled": true}}`)
	writeFile(t, filepath.Join(s.work, "f.txt"), "one\ntwo\n")
	blocked := []struct{ cmd, tool string }{
		{"cat f.txt", "read"},
		{"grep -r one .", "grep"},
		{"find . -name '*.go'", "find"},
		{"sed -i s/one/1/ f.txt", "edit"},
		{"echo x > g.txt", "write"},
	}
	for _, c := range blocked {
		r := s.run("exec", "--", c.cmd)
		if r.code != 1 || !strings.HasPrefix(r.stdout, "Blocked: Use the `"+c.tool+"` tool") ||
			!strings.HasSuffix(r.stdout, "\n\nOriginal command: "+c.cmd+"\n") {
			t.Errorf("%q: %v\nwant blocked, naming the %s tool", c.cmd, r, c.tool)
		}
	}
	if _, err := os.Stat(filepath.Join(s.work, "g.txt")); err == nil {
		t.Errorf("a blocked write ran")
	}
	want(t, s.run("exec", "--", "cat f.txt | wc -l"), "2\n", "", 0)
	want(t, s.run("exec", "--", "printf 'a\\nb\\n' | grep b"), "b\n", "", 0)
	want(t, s.run("exec", "--", "echo x > /dev/null && echo ok"), "ok\n", "", 0)
}

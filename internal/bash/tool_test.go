package bash

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

type toolEnv struct {
	tool *Tool
	tc   ToolContext
	arts *testArtifacts
}

func newToolEnv(t *testing.T) *toolEnv {
	t.Helper()
	arts := newTestArtifacts(filepath.Join(t.TempDir(), "artifacts"))
	return &toolEnv{
		tool: &Tool{Executor: newTestExecutor(t)},
		tc:   ToolContext{Cwd: t.TempDir(), Artifacts: arts, Settings: ToolSettings{Shell: testShell(t)}},
		arts: arts,
	}
}

func (te *toolEnv) exec(t *testing.T, p ToolParams) FinalResult {
	t.Helper()
	return te.execCtx(t, context.Background(), p, nil)
}

func (te *toolEnv) execCtx(t *testing.T, ctx context.Context, p ToolParams, onUpdate func(string)) FinalResult {
	t.Helper()
	ch := make(chan FinalResult, 1)
	go func() { ch <- Finalize(te.tool.Execute(ctx, p, te.tc, onUpdate)) }()
	select {
	case r := <-ch:
		return r
	case <-time.After(hangGuard):
		t.Fatalf("Execute(%q) hung", short(p.Command))
	}
	return FinalResult{}
}

func fptr(f float64) *float64 { return &f }
func iptr(i int) *int         { return &i }

func TestToolSuccessAndErrors(t *testing.T) {
	te := newToolEnv(t)
	cases := []struct {
		cmd     string
		content string
		isError bool
	}{
		{"echo hi", "hi\n", false},
		{"true", "(no output)", false},
		{"echo out; exit 3", "out\n\n\nCommand exited with code 3", true},
		{"exit 4", "(no output)\n\nCommand exited with code 4", true},
		{"seq 1 10 | head -n 3", "1\n2\n3\n", false},
		{"seq 1 10 | tail -2", "9\n10\n", false},
		{"false || head -n 5 /dev/null", "(no output)", false},
		{"yes | head -n 2", "y\ny\n", false},
	}
	for _, c := range cases {
		r := te.exec(t, ToolParams{Command: c.cmd})
		if r.Content != c.content || r.IsError != c.isError {
			t.Errorf("%q: got %q (isError %v); want %q (isError %v)", c.cmd, r.Content, r.IsError, c.content, c.isError)
		}
	}
	// Explicit head/tail arguments win over the extracted limit.
	r := te.exec(t, ToolParams{Command: "seq 1 10 | head -n 3", Head: iptr(1)})
	if r.Content != "1\n" {
		t.Errorf("explicit head: %q", r.Content)
	}
	r = te.exec(t, ToolParams{Command: "seq 1 10", Head: iptr(4), Tail: iptr(2)})
	if r.Content != "3\n4\n" {
		t.Errorf("head then tail: %q", r.Content)
	}
}

func TestToolValidation(t *testing.T) {
	te := newToolEnv(t)
	file := filepath.Join(te.tc.Cwd, "f")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(te.tc.Cwd, "nope")
	for _, c := range []struct {
		p    ToolParams
		want string
	}{
		{ToolParams{Command: "pwd", Cwd: "nope"}, "Working directory does not exist: " + missing},
		{ToolParams{Command: "pwd", Cwd: missing}, "Working directory does not exist: " + missing},
		{ToolParams{Command: "pwd", Cwd: "f"}, "Working directory is not a directory: " + file},
		{ToolParams{Command: "   "}, "Command must not be empty"},
	} {
		r := te.exec(t, c.p)
		if !r.IsError || r.Content != c.want {
			t.Errorf("%+v: got %q", c.p, r.Content)
		}
	}
	sub := filepath.Join(te.tc.Cwd, "sub")
	if err := os.Mkdir(sub, 0o700); err != nil {
		t.Fatal(err)
	}
	if r := te.exec(t, ToolParams{Command: "pwd", Cwd: "sub"}); r.Content != sub+"\n" {
		t.Errorf("relative cwd: %q", r.Content)
	}
	// Every call starts in the tool cwd, even after a cd.
	te.exec(t, ToolParams{Command: "cd /"})
	if r := te.exec(t, ToolParams{Command: "pwd"}); r.Content != te.tc.Cwd+"\n" {
		t.Errorf("cwd not reset: %q", r.Content)
	}
}

func TestClampTimeout(t *testing.T) {
	for _, c := range []struct {
		in   *float64
		want time.Duration
	}{
		{nil, 300 * time.Second}, {fptr(0), time.Second}, {fptr(-5), time.Second},
		{fptr(99999), 3600 * time.Second}, {fptr(1.5), 1500 * time.Millisecond}, {fptr(60), time.Minute},
	} {
		if got, _ := ClampTimeout(c.in); got != c.want {
			t.Errorf("ClampTimeout(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestParseToolParams(t *testing.T) {
	p, err := ParseToolParams([]byte(`{"command":"ls","timeout":"60","head":5,"cwd":"x"}`))
	if err != nil || p.Command != "ls" || *p.Timeout != 60 || *p.Head != 5 || p.Cwd != "x" || p.Tail != nil {
		t.Fatalf("%+v %v", p, err)
	}
	for raw, want := range map[string]string{
		`{"command":"ls","timeout":"abc"}`: `Invalid timeout: expected a number, got "abc"`,
		`{"command":"ls","timeout":true}`:  `Invalid timeout: expected a number, got true`,
		`{"command":5}`:                    `Invalid command: expected a string, got 5`,
		`{"command":"ls","tail":"x"}`:      `Invalid tail: expected a number, got "x"`,
	} {
		if _, err := ParseToolParams([]byte(raw)); err == nil || err.Error() != want {
			t.Errorf("%s: got %v, want %s", raw, err, want)
		}
	}
}

func TestToolTimeoutAndAbort(t *testing.T) {
	te := newToolEnv(t)
	r := te.exec(t, ToolParams{Command: "echo before; sleep 30", Timeout: fptr(1)})
	if !r.IsError || r.Aborted || r.Content != "[Command timed out after 1 seconds]\nbefore\n" || !r.Details.Cancelled {
		t.Fatalf("timeout: %+v", r)
	}
	ctx, cancel := context.WithCancel(context.Background())
	// Abort once the command runs.
	tag := proctest.SleepTag()
	go func() {
		defer cancel()
		if ok, state := testkit.Poll(0, func() (bool, string) {
			pids := proctest.WithArg(tag)
			return len(pids) > 0, fmt.Sprintf("processes %v", pids)
		}); !ok {
			t.Errorf("the command never ran: %s", state)
		}
	}()
	r = te.execCtx(t, ctx, ToolParams{Command: "sleep " + tag}, nil)
	if !r.IsError || !r.Aborted || r.Content != "[Command cancelled]\n" {
		t.Fatalf("abort: %+v", r)
	}
	var ae *ToolAbortError
	if _, err := te.tool.Execute(ctx, ToolParams{Command: "true"}, te.tc, nil); !errors.As(err, &ae) {
		t.Fatalf("already aborted: %v", err)
	}
}

func TestToolTruncationNoticeAndArtifact(t *testing.T) {
	te := newToolEnv(t)
	r := te.exec(t, ToolParams{Command: "seq 1 100000"})
	tr := r.Details.Meta.Truncation
	if r.IsError || tr == nil || tr.ArtifactID != "0" || tr.TotalLines != 100000 || tr.TotalBytes != 588895 ||
		tr.Direction != "tail" || tr.TruncatedBy != "bytes" || tr.ShownRange.End != 100000 ||
		tr.ShownRange.Start != 100000-tr.OutputLines+1 || tr.OutputBytes > 51200 {
		t.Fatalf("meta %+v", tr)
	}
	notice := fmt.Sprintf("\n\n[Showing lines %d-100000 of 100000 (%s limit). Full: artifact://0]", tr.ShownRange.Start, FormatSize(tr.OutputBytes))
	if !strings.HasSuffix(r.Content, "99999\n100000\n"+notice) || !strings.Contains(notice, "(50.0KB limit)") {
		t.Fatalf("content tail %q", r.Content[len(r.Content)-200:])
	}
	path, err := te.arts.Resolve("artifact://0")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	var want strings.Builder
	for i := 1; i <= 100000; i++ {
		fmt.Fprintf(&want, "%d\n", i)
	}
	if string(b) != want.String() {
		t.Fatalf("artifact differs: %d bytes", len(b))
	}
	// (ours) error results keep the notice and the link.
	r = te.exec(t, ToolParams{Command: "seq 1 100000; exit 2"})
	if !r.IsError || !strings.Contains(r.Content, "100000\n\n\nCommand exited with code 2\n\n[Showing lines ") ||
		!strings.HasSuffix(r.Content, "Full: artifact://1]") {
		t.Fatalf("error notice: %q", r.Content[len(r.Content)-150:])
	}
	// A run that does not spill leaves no file and burns no visible id.
	te.exec(t, ToolParams{Command: "echo small"})
	if ids, _ := te.arts.List(); len(ids) != 2 {
		t.Fatalf("artifacts %v", ids)
	}
	r = te.exec(t, ToolParams{Command: "seq 1 100000"})
	if r.Details.Meta.Truncation.ArtifactID != "3" { // the released id 2 is never reused in-process
		t.Fatalf("next id %q", r.Details.Meta.Truncation.ArtifactID)
	}
}

func TestToolTruncationWithoutArtifacts(t *testing.T) {
	te := newToolEnv(t)
	te.tc.Artifacts = nil
	r := te.exec(t, ToolParams{Command: "seq 1 100000"})
	if !strings.HasSuffix(r.Content, "of 100000 (50.0KB limit)]") || strings.Contains(r.Content, "artifact://") {
		t.Fatalf("%q", r.Content[len(r.Content)-100:])
	}
}

func TestToolInterceptor(t *testing.T) {
	te := newToolEnv(t)
	f := filepath.Join(te.tc.Cwd, "notes.txt")
	if err := os.WriteFile(f, []byte("content\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// Disabled: runs.
	if r := te.exec(t, ToolParams{Command: "cat notes.txt"}); r.Content != "content\n" {
		t.Fatalf("disabled: %q", r.Content)
	}
	te.tc.Settings.InterceptorEnabled = true
	// Enabled with no rules configured: the defaults apply, but only for
	// tools that exist right now.
	if r := te.exec(t, ToolParams{Command: "cat notes.txt"}); r.Content != "content\n" {
		t.Fatalf("no read tool: %q", r.Content)
	}
	te.tc.ToolNames = []string{"bash", "read"}
	r := te.exec(t, ToolParams{Command: "cat notes.txt"})
	want := "Blocked: Use the `read` tool instead of cat/head/tail. It provides better context and handles binary files.\n\nOriginal command: cat notes.txt"
	if !r.IsError || r.Content != want || r.Details.SuggestedTool != "read" {
		t.Fatalf("blocked: %+v", r)
	}
	// A configured rule replaces the defaults; invalid regexes are skipped.
	te.tc.Settings.InterceptorRules = []InterceptorRule{
		{Pattern: "([", Tool: "read", Message: "broken"},
		{Pattern: `^\s*ls\b`, Tool: "read", Message: "no ls"},
	}
	if r := te.exec(t, ToolParams{Command: "cat notes.txt"}); r.Content != "content\n" {
		t.Fatalf("custom rules: %q", r.Content)
	}
	if r := te.exec(t, ToolParams{Command: "ls"}); r.Content != "Blocked: no ls\n\nOriginal command: ls" {
		t.Fatalf("custom block: %q", r.Content)
	}
}

func TestToolLiveUpdates(t *testing.T) {
	te := newToolEnv(t)
	var mu sync.Mutex
	var updates []string
	r := te.execCtx(t, context.Background(), ToolParams{Command: "for i in 1 2 3 4 5; do echo line$i; sleep 0.03; done"},
		func(s string) { mu.Lock(); updates = append(updates, s); mu.Unlock() })
	mu.Lock()
	defer mu.Unlock()
	if len(updates) == 0 || updates[len(updates)-1] != r.Content {
		t.Fatalf("updates %q, final %q", updates, r.Content)
	}
	for i := 1; i < len(updates); i++ {
		if !strings.HasPrefix(updates[i], updates[i-1]) {
			t.Fatalf("update %d does not extend the previous: %q then %q", i, updates[i-1], updates[i])
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[int]string{0: "0B", 1023: "1023B", 1024: "1.0KB", 51200: "50.0KB", 51150: "50.0KB", 1 << 20: "1.0MB", 3 << 30: "3.0GB"} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestShouldUsePTY(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	none := env(nil)
	for _, c := range []struct {
		vt   string
		ui   bool
		get  func(string) string
		want bool
	}{
		{"on", true, none, true},
		{"off", true, none, false},
		{"", true, none, false},
		{"on", false, none, false},
		{"on", true, env(map[string]string{"AGENTSH_NO_PTY": "1"}), false},
		{"on", true, env(map[string]string{"PI_NO_PTY": "1"}), false},
		{"on", true, env(map[string]string{"AGENTSH_NO_PTY": "0"}), true},
	} {
		if got := ShouldUsePTY(c.vt, c.ui, c.get); got != c.want {
			t.Errorf("ShouldUsePTY(%q, %v) = %v", c.vt, c.ui, got)
		}
	}
}

// seqLines is the output of `seq from to`.
func seqLines(from, to int) string {
	var b strings.Builder
	for i := from; i <= to; i++ {
		fmt.Fprintf(&b, "%d\n", i)
	}
	return b.String()
}

// A trailing `| head`/`| tail` follows spec §1.1 for every command shape:
// the stage is taken off, the command without it runs, the
// limit cuts the command's whole output (stdout and stderr merged) and the
// exit status is the command's own, the same for a builtin as for a program.
func TestTrailingHeadTailSpecRule(t *testing.T) {
	te := newToolEnv(t)
	pid := te.exec(t, ToolParams{Command: "echo $$"}).Content
	for _, c := range []struct {
		cmd, out string
		code     int
	}{
		{"false | head -n 1", "", 1},
		{"/bin/false | head -n 1", "", 1},
		{"false | tail -n 1", "", 1},
		{"/bin/false | tail -n 1", "", 1},
		{"sh -c 'seq 1 5; exit 3' | head -n 1", "1\n", 3},
		// The upstream of the stage runs in a subshell, as a pipeline stage
		// does: its exit ends that subshell, not the session shell.
		{"exit 3 | tail -n 1", "", 3},
		{"echo x; seq 1 100 | head -n 3", "x\n1\n2\n", 0},
		{"echo x; /usr/bin/seq 1 100 | head -n 3", "x\n1\n2\n", 0},
		{"seq 1 3; seq 10 20 | head -5", "1\n2\n3\n10\n11\n", 0},
		{"seq 1 3; seq 10 20 | tail -n2", "19\n20\n", 0},
		{"for i in 1 2 3 4; do echo $i; done | head -3", "1\n2\n3\n", 0},
		{"true && seq 1 10 | tail -n 2", "9\n10\n", 0},
		{"false && seq 1 10 | head -n 2", "", 1},
		{"false || seq 1 10 | head -n 2", "1\n2\n", 0},
		// stderr is part of the output the limit cuts.
		{"sh -c 'echo err >&2; seq 1 5' | head -n 3", "err\n1\n2\n", 0},
		{"sh -c 'seq 1 5; echo done >&2; exit 4' | tail -n 2", "5\ndone\n", 4},
		// An endless producer is stopped after N lines; its SIGPIPE death
		// counts as success.
		{"yes | head -n 5", "y\ny\ny\ny\ny\n", 0},
		{"echo x; yes | head -n 3", "x\ny\ny\n", 0},
		{"while :; do echo y; done | head -n 2", "y\ny\n", 0},
		{"for i in $(seq 100000); do echo $i; done | head -n 3", "1\n2\n3\n", 0},
	} {
		r := te.exec(t, ToolParams{Command: c.cmd, Timeout: fptr(30)})
		want := c.out
		if want == "" {
			want = "(no output)"
		}
		if c.code != 0 {
			want += fmt.Sprintf("\n\nCommand exited with code %d", c.code)
		}
		if r.Content != want || r.IsError != (c.code != 0) || r.Details.ExitCode == nil || *r.Details.ExitCode != c.code {
			t.Errorf("%q: got %q (error %v), want %q", c.cmd, short(r.Content), r.IsError, want)
		}
	}
	// None of these ended or replaced the session shell.
	if again := te.exec(t, ToolParams{Command: "echo $$"}).Content; again != pid {
		t.Fatalf("session shell replaced: %s then %s", pid, again)
	}
	// A builtin of the session shell itself that prints past the limit
	// before the final pipeline is not cut (only the final pipeline is):
	// the result is still the first lines, and the shell goes on.
	r := te.exec(t, ToolParams{Command: "seq 1 5; echo mid; seq 1 3 | head -n 2"})
	if r.IsError || r.Content != "1\n2\n" {
		t.Errorf("builtin after the limit: %+v", r)
	}
	if r := te.exec(t, ToolParams{Command: "echo $$"}); r.IsError || r.Content != pid {
		t.Errorf("after a builtin printed past the limit: %+v, shell was %s", r, pid)
	}
	// The head and tail arguments replace the extracted values (spec §1.1);
	// the extracted one is kept only where no argument is given.
	for _, c := range []struct {
		p    ToolParams
		want string
	}{
		{ToolParams{Command: "seq 1 100 | head -n 5", Head: iptr(20)}, seqLines(1, 20)},
		{ToolParams{Command: "seq 1 100 | head -n 5", Head: iptr(2)}, "1\n2\n"},
		{ToolParams{Command: "seq 1 100 | head -n 5", Head: iptr(0)}, seqLines(1, 100)},
		{ToolParams{Command: "seq 1 100 | tail -n 5", Tail: iptr(8)}, seqLines(93, 100)},
		{ToolParams{Command: "seq 1 100 | tail -n 5", Head: iptr(2)}, "1\n2\n"}, // head first, then tail
		{ToolParams{Command: "seq 1 100 | head -n 50", Tail: iptr(2)}, "49\n50\n"},
		{ToolParams{Command: "yes | head -n 5", Head: iptr(20), Timeout: fptr(30)}, strings.Repeat("y\n", 20)},
	} {
		if r := te.exec(t, c.p); r.Content != c.want || r.IsError {
			t.Errorf("%q head %v tail %v: %q", c.p.Command, c.p.Head, c.p.Tail, short(r.Content))
		}
	}
}

// checkSeqLines checks that text is lines start..end of `seq 1 N`; the
// first may be cut at its start and an unterminated last one at its end, as
// the 50 KB cap cuts them.
func checkSeqLines(t *testing.T, text string, start, end int) {
	t.Helper()
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != end-start+1 {
		t.Fatalf("%d lines for the range %d-%d: %q", len(lines), start, end, short(text))
	}
	for i, l := range lines {
		n := strconv.Itoa(start + i)
		if l != n && !(i == 0 && strings.HasSuffix(n, l)) &&
			!(i == len(lines)-1 && !strings.HasSuffix(text, "\n") && strings.HasPrefix(n, l)) {
			t.Fatalf("line %d of the range %d-%d is %q: %q", start+i, start, end, l, short(text))
		}
	}
}

// After the head/tail arguments on a truncated output, the notice and
// details.meta.truncation describe the lines returned, not the 50 KB tail
// they came from, and keep the artifact link.
func TestHeadTailNoticeDescribesShownLines(t *testing.T) {
	te := newToolEnv(t)
	const total, totalBytes = 200000, 1288895
	for _, c := range []struct {
		p          ToolParams
		text       string // "" = only checked against the range
		start, end int    // 0 = only checked to be consistent
		dir, by    string
	}{
		{ToolParams{Command: "seq 1 200000", Tail: iptr(3)}, "199998\n199999\n200000\n", 199998, 200000, "tail", "lines"},
		{ToolParams{Command: "seq 1 200000", Head: iptr(3)}, "1\n2\n3\n", 1, 3, "head", "lines"},
		{ToolParams{Command: "seq 1 200000", Head: iptr(10), Tail: iptr(2)}, "9\n10\n", 9, 10, "tail", "lines"},
		// The middle of the output is in neither buffer: read from the artifact.
		{ToolParams{Command: "seq 1 200000", Head: iptr(150000), Tail: iptr(2)}, "149999\n150000\n", 149999, 150000, "tail", "lines"},
		{ToolParams{Command: "seq 1 200000", Head: iptr(150000), Tail: iptr(100000)}, "", 0, 150000, "tail", "bytes"},
		{ToolParams{Command: "seq 1 200000; exit 2", Tail: iptr(2)}, "199999\n200000\n", 199999, 200000, "tail", "lines"},
		// More than 50 KB of lines asked for: the first or last 50 KB of them.
		{ToolParams{Command: "seq 1 200000", Head: iptr(120000)}, "", 1, 0, "head", "bytes"},
		{ToolParams{Command: "seq 1 200000", Tail: iptr(120000)}, "", 0, 200000, "tail", "bytes"},
	} {
		r := te.exec(t, c.p)
		tr := r.Details.Meta.Truncation
		if tr == nil {
			t.Fatalf("%+v: no truncation meta: %q", c.p, short(r.Content))
		}
		id := tr.ArtifactID
		text, notice, ok := strings.Cut(r.Content, "\n\n[Showing ")
		if !ok || id == "" || !strings.HasSuffix(r.Content, "Full: artifact://"+id+"]") {
			t.Fatalf("%+v: notice or link missing: %q", c.p, short(r.Content))
		}
		text, _ = strings.CutSuffix(text, "\n\nCommand exited with code 2")
		if c.text != "" && text != c.text {
			t.Errorf("%+v: text %q, want %q", c.p, short(text), c.text)
		}
		checkSeqLines(t, text, tr.ShownRange.Start, tr.ShownRange.End)
		if (c.start != 0 && tr.ShownRange.Start != c.start) || (c.end != 0 && tr.ShownRange.End != c.end) ||
			tr.Direction != c.dir || tr.TruncatedBy != c.by || tr.TotalLines != total || tr.TotalBytes != totalBytes ||
			tr.OutputBytes != len(text) || tr.OutputLines != tr.ShownRange.End-tr.ShownRange.Start+1 || !r.Details.HeadTailApplied {
			t.Errorf("%+v: meta %+v", c.p, tr)
		}
		limit := ""
		if c.by == "bytes" {
			limit = " (50.0KB limit)"
		}
		want := fmt.Sprintf("lines %d-%d of %d%s. Full: artifact://%s]", tr.ShownRange.Start, tr.ShownRange.End, total, limit, id)
		if notice != want {
			t.Errorf("%+v: notice %q, want %q", c.p, notice, want)
		}
	}
	// A trailing `| tail -n 3` cuts the whole output, which was truncated:
	// the notice gives those three lines and links the full output.
	// `| head -n 20000` stops the command after 20000 lines, of which the
	// last 50 KB are shown, numbered in those 20000.
	r := te.exec(t, ToolParams{Command: "seq 1 200000 | tail -n 3"})
	if tr := r.Details.Meta.Truncation; tr == nil ||
		r.Content != "199998\n199999\n200000\n\n\n[Showing lines 199998-200000 of 200000. Full: artifact://"+tr.ArtifactID+"]" {
		t.Errorf("| tail -n 3: %q %+v", short(r.Content), r.Details.Meta)
	}
	r = te.exec(t, ToolParams{Command: "seq 1 200000 | head -n 20000"})
	text, _, _ := strings.Cut(r.Content, "\n\n[Showing ")
	if tr := r.Details.Meta.Truncation; tr == nil || tr.TotalLines != 20000 || tr.ShownRange.End != 20000 {
		t.Errorf("| head -n 20000: %+v", r.Details.Meta)
	} else {
		checkSeqLines(t, text, tr.ShownRange.Start, tr.ShownRange.End)
	}
	// Without an artifact folder the notice still says which lines are shown.
	te.tc.Artifacts = nil
	r = te.exec(t, ToolParams{Command: "seq 1 200000", Tail: iptr(2)})
	if r.Content != "199999\n200000\n\n\n[Showing lines 199999-200000 of 200000]" {
		t.Errorf("no artifacts: %q", short(r.Content))
	}
	r = te.exec(t, ToolParams{Command: "seq 1 200000", Head: iptr(150000), Tail: iptr(2)})
	text, _, _ = strings.Cut(r.Content, "\n\n[Showing ")
	if tr := r.Details.Meta.Truncation; tr == nil || tr.ArtifactID != "" || tr.TruncatedBy != "bytes" {
		t.Errorf("no artifacts, middle lines: %+v", tr)
	} else {
		checkSeqLines(t, text, tr.ShownRange.Start, tr.ShownRange.End)
	}
}

func TestResolveCwdThroughAFile(t *testing.T) {
	dir := t.TempDir()
	f := filepath.Join(dir, "file")
	if err := os.WriteFile(f, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ResolveCwd(dir, "file/sub"); err == nil || err.Error() != "Working directory does not exist: "+f+"/sub" {
		t.Fatalf("%v", err)
	}
}

func TestExplicitHeadOnHugeOutput(t *testing.T) {
	te := newToolEnv(t)
	r := te.exec(t, ToolParams{Command: "seq 1 200000", Head: iptr(3)})
	if !strings.HasPrefix(r.Content, "1\n2\n3\n\n\n[Showing lines") {
		t.Fatalf("%q", short(r.Content))
	}
	r = te.exec(t, ToolParams{Command: "seq 1 200000", Head: iptr(10), Tail: iptr(2)})
	if !strings.HasPrefix(r.Content, "9\n10\n\n\n[") {
		t.Fatalf("%q", short(r.Content))
	}
	// In `make; ls | head`-like commands the head limits the whole output.
	r = te.exec(t, ToolParams{Command: "seq 3; seq 100000 | head -n 2"})
	if r.Content != "1\n2\n" {
		t.Fatalf("%q", short(r.Content))
	}
}

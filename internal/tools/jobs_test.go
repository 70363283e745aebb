package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/jobs"
	"agentsh/internal/proctest"
	"agentsh/internal/testkit"
)

// jobsHarness is the standard registry with a job manager, the way a mode
// wires it, and a marker in every job's environment.
type jobsHarness struct {
	reg  *Registry
	m    *jobs.Manager
	mark string
	cwd  string
}

func newJobsHarness(t *testing.T) *jobsHarness {
	t.Helper()
	return newJobsHarnessWith(t, nil)
}

// newJobsHarnessWith is newJobsHarness with the tool settings adjusted.
func newJobsHarnessWith(t *testing.T, adjust func(*bash.ToolSettings)) *jobsHarness {
	t.Helper()
	e := bash.NewExecutor()
	t.Cleanup(e.Close)
	m := jobs.NewManager()
	t.Cleanup(m.Close)
	h := &jobsHarness{m: m, cwd: t.TempDir(),
		mark: fmt.Sprintf("AGENTSH_TOOLS_JOB=%s-%d", t.Name(), time.Now().UnixNano())}
	k, v, _ := strings.Cut(h.mark, "=")
	home := t.TempDir()
	ts := bash.ToolSettings{Shell: bash.ShellConfig{Env: map[string]string{"HOME": home, k: v}}}
	if adjust != nil {
		adjust(&ts)
	}
	reg, err := Standard(NewBash(&bash.Tool{Executor: e, Jobs: m}, func() bash.ToolContext {
		return bash.ToolContext{Cwd: h.cwd, Settings: ts}
	}), Env{Cwd: func() string { return h.cwd }})
	if err != nil {
		t.Fatal(err)
	}
	h.reg = reg
	return h
}

func (h *jobsHarness) call(t *testing.T, name string, args map[string]any) Result {
	t.Helper()
	tl, ok := h.reg.Get(name)
	if !ok {
		t.Fatalf("no tool %q in %v", name, h.reg.Names())
	}
	raw, _ := json.Marshal(args)
	return tl.Execute(context.Background(), raw, nil)
}

// waitFor calls job_output with wait_seconds until its text holds want
// (hang guard: 30 s).
func (h *jobsHarness) waitFor(t *testing.T, id any, want string) string {
	t.Helper()
	var all strings.Builder
	testkit.Eventually(t, 0, fmt.Sprintf("job %v to show %q", id, want), func() (bool, string) {
		r := h.call(t, JobOutputName, map[string]any{"id": id, "wait_seconds": 0.2})
		if r.IsError {
			t.Fatalf("job_output: %s", r.Content)
		}
		all.WriteString(r.Content + "\n")
		return strings.Contains(all.String(), want), fmt.Sprintf("got …%q", all.String()[max(0, all.Len()-500):])
	})
	return all.String()
}

const hint1 = `Read its new output with job_output {"id": "1"} (add "wait_seconds" to wait until it ends or waits for input), ` +
	`type into it with job_input {"id": "1", "text": "..."}, stop it with job_kill {"id": "1"}; jobs lists every job.`

// TestJobToolsRegistered: with a job manager the four tools follow the
// file tools and bash offers background; without one, neither.
func TestJobToolsRegistered(t *testing.T) {
	h := newJobsHarness(t)
	names := h.reg.Names()
	if got := names[len(names)-4:]; !reflect.DeepEqual(got, []string{"jobs", "job_output", "job_input", "job_kill"}) {
		t.Errorf("names = %v", names)
	}
	for _, s := range h.reg.Specs() {
		var v map[string]any
		if err := json.Unmarshal(s.Parameters, &v); err != nil {
			t.Errorf("%s schema: %v", s.Name, err)
		}
	}
	bt, _ := h.reg.Get("bash")
	if !strings.Contains(string(bt.Schema()), `"background":{"type":"boolean"`) {
		t.Errorf("bash schema lacks background: %s", bt.Schema())
	}
	plain, err := Standard(newBash(t, t.TempDir(), false), Env{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range plain.Names() {
		if strings.HasPrefix(n, "job") {
			t.Errorf("job tool %q without a manager", n)
		}
	}
	pb, _ := plain.Get("bash")
	if strings.Contains(string(pb.Schema()), "background") {
		t.Error("bash offers background without a manager")
	}
	raw, _ := json.Marshal(map[string]any{"command": "sleep 1", "background": true})
	if r := pb.Execute(context.Background(), raw, nil); !r.IsError || r.Content != bash.NoJobsMessage {
		t.Errorf("background without a manager: %+v", r)
	}
}

// TestHTTPServerThroughTools: the model starts a server in the background,
// fetches from it, reads its log lines and kills it: nothing is left.
func TestHTTPServerThroughTools(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the http.server test needs it")
	}
	h := newJobsHarness(t)
	if err := os.WriteFile(h.cwd+"/hello.txt", []byte("hello from the job\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	cmd := fmt.Sprintf("%s -u -m http.server --bind 127.0.0.1 %d", py, port)
	r := h.call(t, "bash", map[string]any{"command": cmd, "background": true})
	if r.IsError || !strings.HasPrefix(r.Content, "Started job 1: "+cmd+"\n") || !strings.HasSuffix(r.Content, "\n\nJob 1 is running. "+hint1) {
		t.Fatalf("background start: %+v", r)
	}
	if !strings.Contains(r.Content, "Serving HTTP") { // printed within the settle time, or later
		h.waitFor(t, "1", "Serving HTTP")
	}
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/hello.txt", port))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "hello from the job\n" {
		t.Fatalf("body %q", body)
	}
	out := h.waitFor(t, 1, `"GET /hello.txt HTTP/1.1" 200`) // the id as a number
	if !strings.HasPrefix(out, "Job 1 is running.\n") {
		t.Errorf("job_output: %q", out)
	}
	list := h.call(t, JobsName, nil)
	if !regexp.MustCompile(`^ID  STATE    RUNTIME  OUTPUT  COMMAND\n1   running  [0-9.]+s +[0-9.]+(B|KB) +` + regexp.QuoteMeta(cmd) + `$`).MatchString(list.Content) {
		t.Errorf("jobs:\n%s", list.Content)
	}
	if len(proctest.Marked(h.mark)) == 0 {
		t.Fatal("no process carries the job's mark: the check below would prove nothing")
	}
	k := h.call(t, JobKillName, map[string]any{"id": "1"})
	if k.IsError || !strings.HasPrefix(k.Content, "Job 1 was killed.\n") {
		t.Errorf("job_kill: %+v", k)
	}
	if left := proctest.Marked(h.mark); len(left) > 0 {
		t.Errorf("processes left after job_kill: %v", left)
	}
	if again := h.call(t, JobKillName, map[string]any{"id": 1}); again.Content != "Job 1 had already ended. Job 1 was killed.\n(no new output)" {
		t.Errorf("second job_kill: %q", again.Content)
	}
}

// TestPromptThroughTools: a prompt in the background is found waiting for
// input by job_output's wait, and job_input answers it.
func TestPromptThroughTools(t *testing.T) {
	h := newJobsHarness(t)
	r := h.call(t, "bash", map[string]any{"command": `read -p "Proceed? [y/N] " a; echo "got $a"`, "background": "true"})
	if r.IsError || !strings.HasPrefix(r.Content, "Started job 1: ") {
		t.Fatalf("start: %+v", r)
	}
	testkit.Eventually(t, 0, "job 1 to wait for input", func() (bool, string) {
		out := h.call(t, JobOutputName, map[string]any{"id": "1", "wait_seconds": 30})
		return strings.HasPrefix(out.Content, "Job 1 is waiting for input."), fmt.Sprintf("job_output: %q", out.Content)
	})
	in := h.call(t, JobInputName, map[string]any{"id": " 1 ", "text": `y\n`})
	if in.IsError || in.Content != "Job 1 exited with code 0.\ny\ngot y" {
		t.Errorf("job_input: %q", in.Content)
	}
	if r := h.call(t, JobInputName, map[string]any{"id": "1", "text": "more"}); !r.IsError || r.Content != "Job 1 exited with code 0. It takes no more input.\n(no new output)" {
		t.Errorf("input to an ended job: %+v", r)
	}
}

// TestBackgroundEndsQuickly: a command that ends within the settle time
// returns its output and exit status at once, with no tool hint.
func TestBackgroundEndsQuickly(t *testing.T) {
	h := newJobsHarness(t)
	start := time.Now()
	r := h.call(t, "bash", map[string]any{"command": "echo built; exit 3", "background": true})
	if r.Content != "Started job 1: echo built; exit 3\nbuilt\n\nJob 1 exited with code 3." {
		t.Errorf("content %q", r.Content)
	}
	if time.Since(start) > 20*time.Second {
		t.Errorf("a job that ended at once held the call for %v", time.Since(start))
	}
}

// TestJobToolErrors: the texts of the refusals.
func TestJobToolErrors(t *testing.T) {
	h := newJobsHarness(t)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{JobOutputName, map[string]any{"id": "1"}, "No job 1: no job has been started."},
		{JobKillName, map[string]any{}, `Missing id: give the job id, e.g. "1" (the jobs tool lists them).`},
		{JobOutputName, map[string]any{"id": 1.5}, `Invalid id: expected a job id such as "1", got 1.5`},
		{JobsName, nil, "No jobs."},
		{"bash", map[string]any{"command": "true", "background": "maybe"}, `Invalid background: expected true or false, got "maybe"`},
	} {
		r := h.call(t, c.tool, c.args)
		if r.Content != c.want || r.IsError != (c.tool != JobsName) {
			t.Errorf("%s %v: %+v, want %q", c.tool, c.args, r, c.want)
		}
	}
	h.m.MaxJobs = 1
	h.call(t, "bash", map[string]any{"command": "sleep 60", "background": true})
	r := h.call(t, "bash", map[string]any{"command": "sleep 60", "background": true})
	if !r.IsError || r.Content != "Too many jobs (1 running): kill one with job_kill first." {
		t.Errorf("past MaxJobs: %+v", r)
	}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string
	}{
		{JobOutputName, map[string]any{"id": "9"}, "No job 9. Jobs: 1."},
		{JobInputName, map[string]any{"id": "1", "text": ""}, "Nothing to type: text is empty."},
		{JobInputName, map[string]any{"id": "1"}, `Invalid text: give the text to type as a string, e.g. "y\n".`},
		{JobOutputName, map[string]any{"id": "1", "wait_seconds": "soon"}, `Invalid wait_seconds: expected a number, got "soon"`},
	} {
		if r := h.call(t, c.tool, c.args); !r.IsError || r.Content != c.want {
			t.Errorf("%s %v: %+v, want %q", c.tool, c.args, r, c.want)
		}
	}
}

// TestTimeoutKillsBackgroundJob: an explicit timeout still kills a job.
func TestTimeoutKillsBackgroundJob(t *testing.T) {
	h := newJobsHarness(t)
	tag := proctest.SleepTag()
	h.call(t, "bash", map[string]any{"command": "sleep " + tag, "background": true, "timeout": 1})
	r := h.call(t, JobOutputName, map[string]any{"id": "1", "wait_seconds": 30})
	if r.Content != "Job 1 timed out and was killed.\n(no new output)" {
		t.Errorf("job_output: %q", r.Content)
	}
	if left := proctest.WithArg(tag); len(left) > 0 {
		t.Errorf("left after the timeout: %v", left)
	}
}

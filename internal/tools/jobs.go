package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/jobs"
)

// Names of the job tools (spec §9).
const (
	JobsName      = "jobs"
	JobOutputName = "job_output"
	JobInputName  = "job_input"
	JobKillName   = "job_kill"
)

// InputSettle is how long job_input waits for what the program answers.
const InputSettle = time.Second

// MaxWaitSeconds bounds job_output's wait_seconds, like the bash timeout.
const MaxWaitSeconds = bash.MaxTimeoutSeconds

const (
	jobsDescription = "List every job of this session (commands started with bash `background: true`): " +
		"id, state (running, waiting for input, exited N, killed, timed out), runtime, output size and command."
	jobOutputDescription = "Return a job's state and its output since the previous read (the last 50KB, with an " +
		"artifact:// link to the full output when longer). With wait_seconds, first wait until the job ends, waits " +
		"for input, or the time passes, whichever comes first."
	jobInputDescription = "Type text into a job's terminal and return the output that follows within 1 second. " +
		`Escapes: \n (Enter), \t (Tab), \x03 (ctrl+c), \x04 (ctrl+d), \e (Escape), \xHH (any byte), \\ (a backslash).`
	jobKillDescription = "Kill a job and every process it started, and return its final state and unread output."
)

var (
	jobsSchema      = json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`)
	jobIDProperty   = `"id":{"type":["string","integer"],"description":"The job id, e.g. \"1\"."}`
	jobOutputSchema = json.RawMessage(`{"type":"object","properties":{` + jobIDProperty + `,` +
		`"wait_seconds":{"type":"number","description":"Wait up to this many seconds for the job to end or wait for input (default 0, at most 3600)."}` +
		`},"required":["id"],"additionalProperties":false}`)
	jobInputSchema = json.RawMessage(`{"type":"object","properties":{` + jobIDProperty + `,` +
		`"text":{"type":"string","description":"What to type; \\n is Enter."}` +
		`},"required":["id","text"],"additionalProperties":false}`)
	jobKillSchema = json.RawMessage(`{"type":"object","properties":{` + jobIDProperty +
		`},"required":["id"],"additionalProperties":false}`)
)

// JobTools returns the model's tools over m: jobs, job_output, job_input and
// job_kill.
func JobTools(m *jobs.Manager) []Tool {
	return []Tool{
		&jobTool{m: m, name: JobsName, desc: jobsDescription, schema: jobsSchema, run: runJobs},
		&jobTool{m: m, name: JobOutputName, desc: jobOutputDescription, schema: jobOutputSchema, run: runJobOutput},
		&jobTool{m: m, name: JobInputName, desc: jobInputDescription, schema: jobInputSchema, run: runJobInput},
		&jobTool{m: m, name: JobKillName, desc: jobKillDescription, schema: jobKillSchema, run: runJobKill},
	}
}

type jobTool struct {
	m          *jobs.Manager
	name, desc string
	schema     json.RawMessage
	run        func(ctx context.Context, m *jobs.Manager, args map[string]json.RawMessage) Result
}

func (t *jobTool) Name() string            { return t.name }
func (t *jobTool) Description() string     { return t.desc }
func (t *jobTool) Schema() json.RawMessage { return t.schema }

func (t *jobTool) Execute(ctx context.Context, raw json.RawMessage, _ func(string)) Result {
	args := map[string]json.RawMessage{}
	if len(strings.TrimSpace(string(raw))) > 0 {
		if err := json.Unmarshal(raw, &args); err != nil {
			return errResult(fmt.Sprintf("Invalid %s arguments: %v", t.name, err))
		}
	}
	return t.run(ctx, t.m, args)
}

func errResult(msg string) Result { return Result{Content: msg, IsError: true} }

// findJob resolves the id argument, given as a string ("1") or a number (1).
func findJob(m *jobs.Manager, args map[string]json.RawMessage) (*jobs.Job, *Result) {
	v, ok := args["id"]
	if !ok || string(v) == "null" {
		r := errResult("Missing id: give the job id, e.g. \"1\" (the jobs tool lists them).")
		return nil, &r
	}
	var id string
	if err := json.Unmarshal(v, &id); err != nil {
		var n float64
		if err := json.Unmarshal(v, &n); err != nil || n != math.Trunc(n) {
			r := errResult(fmt.Sprintf("Invalid id: expected a job id such as \"1\", got %s", v))
			return nil, &r
		}
		id = strconv.FormatFloat(n, 'f', -1, 64)
	}
	j, found := m.Get(id)
	if !found {
		r := errResult(NoJob(m, strings.TrimSpace(id)))
		return nil, &r
	}
	return j, nil
}

// NoJob says that id names no job of m, and which ones exist.
func NoJob(m *jobs.Manager, id string) string {
	var ids []string
	for _, j := range m.List() {
		ids = append(ids, j.ID())
	}
	if len(ids) == 0 {
		return fmt.Sprintf("No job %s: no job has been started.", id)
	}
	return fmt.Sprintf("No job %s. Jobs: %s.", id, strings.Join(ids, ", "))
}

func runJobs(_ context.Context, m *jobs.Manager, _ map[string]json.RawMessage) Result {
	list := m.List()
	if len(list) == 0 {
		return Result{Content: "No jobs."}
	}
	var b strings.Builder
	w := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "ID\tSTATE\tRUNTIME\tOUTPUT\tCOMMAND")
	for _, j := range list {
		fmt.Fprintln(w, bash.JobLine(j))
	}
	_ = w.Flush()
	return Result{Content: strings.TrimSuffix(b.String(), "\n")}
}

// report is a job's state sentence followed by its unread output.
func report(j *jobs.Job, st jobs.State) string {
	body := bash.JobOutputText(j.ReadNew(), "(no new output)")
	return bash.JobSentence(j.ID(), st) + "\n" + body
}

func runJobOutput(ctx context.Context, m *jobs.Manager, args map[string]json.RawMessage) Result {
	j, errRes := findJob(m, args)
	if errRes != nil {
		return *errRes
	}
	st := j.State()
	if v, ok := args["wait_seconds"]; ok && string(v) != "null" {
		var secs float64
		if err := json.Unmarshal(v, &secs); err != nil {
			var s string
			if json.Unmarshal(v, &s) != nil {
				return errResult(fmt.Sprintf("Invalid wait_seconds: expected a number, got %s", v))
			}
			if secs, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
				return errResult(fmt.Sprintf("Invalid wait_seconds: expected a number, got %s", v))
			}
		}
		if math.IsNaN(secs) || secs < 0 {
			secs = 0
		}
		secs = min(secs, MaxWaitSeconds)
		if secs > 0 {
			st = j.Wait(ctx, time.Duration(secs*float64(time.Second)))
		}
	}
	return Result{Content: report(j, st)}
}

func runJobInput(ctx context.Context, m *jobs.Manager, args map[string]json.RawMessage) Result {
	j, errRes := findJob(m, args)
	if errRes != nil {
		return *errRes
	}
	var text string
	if v, ok := args["text"]; !ok || json.Unmarshal(v, &text) != nil {
		return errResult(`Invalid text: give the text to type as a string, e.g. "y\n".`)
	}
	if text == "" {
		return errResult("Nothing to type: text is empty.")
	}
	if st := j.State(); st.Ended() {
		return errResult(bash.JobSentence(j.ID(), st) + " It takes no more input.\n" + bash.JobOutputText(j.ReadNew(), "(no new output)"))
	}
	if err := j.Input(text); err != nil {
		if errors.Is(err, bash.ErrNoTerminal) {
			return errResult("Job " + j.ID() + " takes no input: " + bash.ErrNoTerminal.Error() + ".")
		}
		st := j.Final() // it ended just now
		return errResult(bash.JobSentence(j.ID(), st) + " It takes no more input.\n" + bash.JobOutputText(j.ReadNew(), "(no new output)"))
	}
	// Give the program InputSettle to answer; a job that ends answers at once.
	t := time.NewTimer(InputSettle)
	defer t.Stop()
	select {
	case <-j.Done():
		return Result{Content: report(j, j.Final())}
	case <-t.C:
	case <-ctx.Done():
	}
	return Result{Content: report(j, j.State())}
}

func runJobKill(_ context.Context, m *jobs.Manager, args map[string]json.RawMessage) Result {
	j, errRes := findJob(m, args)
	if errRes != nil {
		return *errRes
	}
	if st := j.State(); st.Ended() {
		return Result{Content: "Job " + j.ID() + " had already ended. " + report(j, st)}
	}
	return Result{Content: report(j, j.Kill())}
}

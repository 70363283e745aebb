package bash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"agentsh/internal/jobs"
)

// BackgroundSettle is how long at most a `background: true` call waits
// before it returns: what the command printed by then (a server's
// "listening on …", an early error) is in the result, and a command that
// ends sooner returns its exit status at once. A command that prints
// returns once its output settles (BackgroundQuiet); only a silent one
// waits the whole BackgroundSettle.
const BackgroundSettle = time.Second

// BackgroundQuiet is the silence after the latest output that ends a
// `background: true` call's wait: long enough for the lines a program
// prints together (a banner, then "listening on …"), short enough that a
// server that is ready at once returns in well under 0.3 s.
const BackgroundQuiet = 150 * time.Millisecond

// NoJobsMessage refuses `background: true` where no job manager exists.
const NoJobsMessage = "Background jobs are not available in this mode."

// startJob runs command as a job of m (spec §9): on a terminal, with no
// timeout unless one was asked for, returning once its output settles,
// after settle (0 = BackgroundSettle) at most, or as soon as it ends.
func startJob(ctx context.Context, m *jobs.Manager, command, cwd string, timeout *float64,
	artPath, artID string, tc ToolContext, settle time.Duration) (*ToolResult, error) {
	if settle <= 0 {
		settle = BackgroundSettle
	}
	var limit time.Duration
	if timeout != nil {
		limit, _ = ClampTimeout(timeout)
	}
	j, err := StartJob(m, command, cwd, limit, artPath, artID, tc)
	if err != nil {
		return nil, &ToolError{Message: err.Error()}
	}
	command = j.Command()
	st := j.Settle(ctx, settle, BackgroundQuiet)
	out := j.ReadNew()
	var b strings.Builder
	fmt.Fprintf(&b, "Started job %s: %s\n", j.ID(), command)
	if body := JobOutputText(out, ""); body != "" {
		b.WriteString(body)
		b.WriteString("\n")
	}
	b.WriteString("\n")
	b.WriteString(JobSentence(j.ID(), st))
	if !st.Ended() {
		b.WriteString(" " + JobToolsHint(j.ID()))
	}
	details := ToolDetails{}
	if st.Kind == jobs.Exited {
		code := st.Code
		details.ExitCode = &code
	}
	return &ToolResult{Text: b.String(), Details: details}, nil
}

// StartJob runs command as a job of m in cwd, with tc's shell and prefix,
// from the session's rc snapshot and tc.View's state, as the persistent
// shell runs a command (newPTYStart; the names of
// tc.Settings.Shell.ScrubEnv left out) and the reserved artifact artID at
// artPath, released when the job ends without spilling or cannot start.
// limit 0 = no timeout. The job's Command includes the prefix.
func StartJob(m *jobs.Manager, command, cwd string, limit time.Duration, artPath, artID string, tc ToolContext) (*jobs.Job, error) {
	release := func() {
		if artID != "" {
			tc.Artifacts.Release(artID)
		}
	}
	if m == nil {
		release()
		return nil, errors.New(NoJobsMessage) //lint:ignore ST1005 the model reads it as is
	}
	shell, err := ResolveShell(tc.Settings.Shell.Path)
	if err != nil {
		release()
		return nil, err
	}
	if tc.Settings.Shell.Prefix != "" {
		command = tc.Settings.Shell.Prefix + " " + command
	}
	ps, err := newPTYStart(tc, shell, command)
	if err != nil {
		release()
		return nil, err
	}
	j, err := m.Start(jobs.Spec{
		Command: command, Shell: shell, Args: ps.args, Own: []string{ps.dir}, Cwd: cwd, Env: ps.env,
		ArtifactPath: artPath, ArtifactID: artID, Timeout: limit,
		ArtifactMaxBytes: tc.Settings.ArtifactMaxBytes,
		Sandbox:          tc.Settings.Shell.Sandbox,
	})
	if err != nil {
		os.RemoveAll(ps.dir)
		release()
		return nil, err
	}
	if artID != "" {
		go func() {
			<-j.Done()
			if r, _ := j.Result(); r.ArtifactID == "" {
				tc.Artifacts.Release(artID)
			}
		}()
	}
	return j, nil
}

// jobResult is the result of a foreground call whose command became a job:
// the output so far, shaped as any result (tail, artifact), why it became a
// job, its state and how to follow it up. The artifact stays reserved while
// the job writes it.
func jobResult(res BashResult, head, tail int, artPath, artID string, tc ToolContext, details ToolDetails) *ToolResult {
	j := res.Job
	if artID != "" {
		ReleaseWhenJobEnds(j, artID, tc.Artifacts)
	}
	if res.ArtifactID == "" {
		artPath = ""
	}
	text, meta, applied := shapeOutput(res, head, tail, artPath)
	details.Meta, details.HeadTailApplied = meta, applied
	details.JobID = j.ID()
	var b strings.Builder
	if text = strings.TrimRight(text, "\n"); text != "" {
		b.WriteString(text)
		b.WriteString("\n\n")
	}
	b.WriteString(DetachSentence(res.JobReason, j.ID(), tc.Settings.AutoBackground))
	b.WriteString(" ")
	st := j.State()
	b.WriteString(JobSentence(j.ID(), st))
	if !st.Ended() {
		b.WriteString(" " + JobToolsHint(j.ID()))
	}
	return &ToolResult{Text: b.String(), Details: details}
}

// ReleaseWhenJobEnds gives the reserved artifact id back once job j has
// ended without needing it (its output fit in memory).
func ReleaseWhenJobEnds(j *jobs.Job, id string, arts ArtifactAllocator) {
	go func() {
		<-j.Done()
		if r, _ := j.Result(); r.ArtifactID == "" {
			arts.Release(id)
		}
	}()
}

// DetachSentence says why a foreground command became job id (after: the
// auto-background threshold).
func DetachSentence(why DetachReason, id string, after time.Duration) string {
	switch why {
	case DetachInput:
		return "The command is waiting for input, so it became job " + id + "."
	case DetachUser:
		return "The user moved the command to the background: it became job " + id + "."
	default:
		return fmt.Sprintf("The command is still running after %s, so it became job %s instead of holding the turn.", FormatRuntime(after), id)
	}
}

// JobSentence says a job's state as a sentence: "Job 1 is running.",
// "Job 1 is waiting for input.", "Job 1 exited with code 0.", "Job 1 was
// killed.", "Job 1 timed out and was killed.", "Job 1 failed."
func JobSentence(id string, st jobs.State) string {
	switch st.Kind {
	case jobs.Running:
		return "Job " + id + " is running."
	case jobs.WaitingForInput:
		return "Job " + id + " is waiting for input."
	case jobs.Exited:
		return fmt.Sprintf("Job %s exited with code %d.", id, st.Code)
	case jobs.Killed:
		return "Job " + id + " was killed."
	case jobs.TimedOut:
		return "Job " + id + " timed out and was killed."
	default:
		return "Job " + id + " failed."
	}
}

// JobToolsHint tells the model how to follow a job up.
func JobToolsHint(id string) string {
	q, _ := json.Marshal(id)
	return fmt.Sprintf(`Read its new output with job_output {"id": %[1]s} (add "wait_seconds" to wait until it ends or waits for input), `+
		`type into it with job_input {"id": %[1]s, "text": "..."}, stop it with job_kill {"id": %[1]s}; jobs lists every job.`, q)
}

// JobOutputText is a piece of a job's output as the model reads it, with
// the truncation notice when only its tail is kept; empty means nothing
// new (the caller says so in its own words, or not at all).
func JobOutputText(o jobs.Output, empty string) string {
	text := strings.TrimSuffix(o.Text, "\n")
	if text == "" && !o.Truncated {
		return empty
	}
	if !o.Truncated {
		return text
	}
	notice := fmt.Sprintf("[Showing the last %s of %s of new output", FormatSize(len(o.Text)), FormatSize(o.Bytes))
	if o.ArtifactID != "" {
		notice += ". Full: artifact://" + o.ArtifactID
	}
	return text + "\n\n" + notice + "]"
}

// JobLine is one row of the jobs list: id, state, runtime, output size and
// the command's first line.
func JobLine(j *jobs.Job) string {
	return fmt.Sprintf("%s\t%s\t%s\t%s\t%s", j.ID(), j.State(), FormatRuntime(j.Runtime()), FormatSize(j.OutputBytes()), FirstLine(j.Command()))
}

// FormatRuntime rounds a job's runtime for people: "0.4s", "12s", "3m05s",
// "2h01m".
func FormatRuntime(d time.Duration) string {
	switch {
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	default:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
}

// FirstLine is a command's first line, with " …" when more follow.
func FirstLine(command string) string {
	if i := strings.IndexByte(command, '\n'); i >= 0 {
		return command[:i] + " …"
	}
	return command
}

// parseBool accepts a JSON boolean or one sent as a string ("true").
func parseBool(v json.RawMessage) (bool, error) {
	var b bool
	if err := json.Unmarshal(v, &b); err == nil {
		return b, nil
	}
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return false, err
	}
	return strconv.ParseBool(strings.TrimSpace(s))
}

package agent

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"agentsh/internal/bash"
	"agentsh/internal/jobs"
)

// Bounds of the output tail a job notice shows: enough for a build's
// verdict or a server's last error, short enough to cost little context.
const (
	JobNoticeMaxLines = 20
	JobNoticeMaxBytes = 2048
)

// SetJobs gives the session the manager its model's background jobs run
// in, so the agent loop can tell the model when one ends (JobNotice). Jobs
// that ended before are not announced: they belong to an earlier session
// of the same manager (RPC new_session).
func (a *AgentSession) SetJobs(m *jobs.Manager) {
	told := map[*jobs.Job]bool{}
	if m != nil {
		for _, j := range m.List() {
			if j.State().Ended() {
				told[j] = true
			}
		}
	}
	a.mu.Lock()
	a.jobs, a.jobsTold = m, told
	a.mu.Unlock()
}

// Jobs is the manager set by SetJobs; nil when the session has none.
func (a *AgentSession) Jobs() *jobs.Manager {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.jobs
}

// JobNotice is the note the model gets before its next request about the
// jobs that ended since the previous note and whose end it has not read
// (job_output or job_kill after the end tell it already): per job a line
// such as "[Job 1 exited with code 0: make]" and the last lines of its
// output. Each job is announced once; "" when there is nothing to say.
func (a *AgentSession) JobNotice() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.jobs == nil {
		return ""
	}
	var parts []string
	for _, j := range a.jobs.List() {
		if a.jobsTold[j] {
			continue
		}
		st := j.State()
		if !st.Ended() {
			continue
		}
		a.jobsTold[j] = true
		if j.ReadAfterEnd() {
			continue
		}
		parts = append(parts, jobNotice(j, st))
	}
	return strings.Join(parts, "\n\n")
}

// jobNotice is one job's part of JobNotice.
func jobNotice(j *jobs.Job, st jobs.State) string {
	head := "[" + strings.TrimSuffix(bash.JobSentence(j.ID(), st), ".") + ": " + bash.FirstLine(j.Command()) + "]"
	res, _ := j.Result()
	tail, cut := noticeTail(strings.TrimRight(res.Output, "\n"))
	if res.Truncated {
		cut = true
	}
	if tail == "" {
		return head + "\n(no output)"
	}
	if !cut {
		return head + "\n" + tail
	}
	q, _ := json.Marshal(j.ID())
	return fmt.Sprintf("%s\n%s\n[Only the last lines of its output; job_output {\"id\": %s} shows what you have not read]", head, tail, q)
}

// noticeTail keeps the last JobNoticeMaxLines lines of out, within
// JobNoticeMaxBytes cut at a character boundary, and says whether it cut.
func noticeTail(out string) (string, bool) {
	cut := false
	if n := strings.Count(out, "\n"); n >= JobNoticeMaxLines {
		lines := strings.Split(out, "\n")
		out = strings.Join(lines[len(lines)-JobNoticeMaxLines:], "\n")
		cut = true
	}
	if len(out) > JobNoticeMaxBytes {
		i := len(out) - JobNoticeMaxBytes
		for i < len(out) && !utf8.RuneStart(out[i]) {
			i++
		}
		out = out[i:]
		cut = true
	}
	return out, cut
}

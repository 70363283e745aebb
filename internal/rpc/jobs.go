package rpc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/jobs"
	"agentsh/internal/tools"
)

// Job command types (docs/rpc.md, "Jobs").
const (
	CmdJobs      = "jobs"
	CmdJobOutput = "job_output"
	CmdJobInput  = "job_input"
	CmdJobKill   = "job_kill"
)

func init() {
	register(
		cmd(CmdJobs, (*server).listJobs),
		cmd(CmdJobOutput, (*server).jobOutput),
		cmd(CmdJobInput, (*server).jobInput),
		cmd(CmdJobKill, (*server).jobKill),
	)
}

// jobOutputParams is job_output {jobId, waitSeconds?}. A jobId is a
// string ("1") or a number (1), kept raw to tell them apart.
type jobOutputParams struct {
	JobID       json.RawMessage `json:"jobId"`
	WaitSeconds *float64        `json:"waitSeconds"`
}

// jobInputParams is job_input {jobId, text}.
type jobInputParams struct {
	JobID json.RawMessage `json:"jobId"`
	Text  *string         `json:"text"`
}

// jobKillParams is job_kill {jobId}.
type jobKillParams struct {
	JobID json.RawMessage `json:"jobId"`
}

// Job event types.
const (
	EventJobStart  = "job_start"
	EventJobUpdate = "job_update"
	EventJobEnd    = "job_end"
)

// errNoJobs answers the job commands when Config.Jobs is nil.
var errNoJobs = errors.New(bash.NoJobsMessage) //lint:ignore ST1005 user-facing text

// JobInfo is a job as the job commands and events show it.
type JobInfo struct {
	ID      string `json:"id"`
	Command string `json:"command"`
	// State is running, waitingForInput, exited, killed, timedOut or failed.
	State string `json:"state"`
	// StateText is the state in the words of the model's jobs tool
	// ("exited 0", "waiting for input").
	StateText   string `json:"stateText"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	RuntimeMs   int64  `json:"runtimeMs"`
	OutputBytes int    `json:"outputBytes"`
}

// JobOutputData is the data of job_output, job_input and job_kill: the job
// and its output since the previous read (by any client of the job,
// the model's job_output included).
type JobOutputData struct {
	JobInfo
	Output string `json:"output"`
	// NewBytes is the size of the output since the previous read; more
	// than Output holds when Truncated (only the last 50 KB are kept).
	NewBytes   int    `json:"newBytes"`
	Truncated  bool   `json:"truncated"`
	ArtifactID string `json:"artifactId,omitempty"`
	// AlreadyEnded is set by job_kill when the job had ended before.
	AlreadyEnded bool `json:"alreadyEnded,omitempty"`
}

// JobEvent is a job_start, job_update or job_end line. A job_end carries the
// tail of the job's whole output (the last 50 KB, with the notice of a
// truncation or a kill), as a bash response does.
type JobEvent struct {
	Type       string  `json:"type"`
	Job        JobInfo `json:"job"`
	Output     *string `json:"output,omitempty"`
	Truncated  bool    `json:"truncated,omitempty"`
	TotalBytes int     `json:"totalBytes,omitempty"`
	ArtifactID string  `json:"artifactId,omitempty"`
}

var stateNames = map[jobs.Kind]string{
	jobs.Running: "running", jobs.WaitingForInput: "waitingForInput", jobs.Exited: "exited",
	jobs.Killed: "killed", jobs.TimedOut: "timedOut", jobs.Failed: "failed",
}

func jobInfo(j *jobs.Job, st jobs.State) JobInfo {
	info := JobInfo{
		ID: j.ID(), Command: j.Command(), State: stateNames[st.Kind], StateText: st.String(),
		RuntimeMs: j.Runtime().Milliseconds(), OutputBytes: j.OutputBytes(),
	}
	if st.Kind == jobs.Exited {
		code := st.Code
		info.ExitCode = &code
	}
	return info
}

// outputData reads j's new output.
func outputData(j *jobs.Job, st jobs.State) JobOutputData {
	o := j.ReadNew()
	return JobOutputData{JobInfo: jobInfo(j, st), Output: o.Text, NewBytes: o.Bytes, Truncated: o.Truncated, ArtifactID: o.ArtifactID}
}

// jobEvent writes a job's change as its event.
func (s *server) jobEvent(c jobs.Change) {
	e := JobEvent{Type: EventJobUpdate, Job: jobInfo(c.Job, c.State)}
	switch {
	case c.Started:
		e.Type = EventJobStart
	case c.State.Ended():
		e.Type = EventJobEnd
		if res, ok := c.Job.Result(); ok {
			e.Output, e.Truncated, e.TotalBytes, e.ArtifactID = &res.Output, res.Truncated, res.TotalBytes, res.ArtifactID
		}
	}
	s.writeLine(e)
}

// findJob resolves a command's jobId, a string ("1") or a number (1).
func (s *server) findJob(jobID json.RawMessage) (*jobs.Job, error) {
	m := s.cfg.Jobs
	if m == nil {
		return nil, errNoJobs
	}
	if len(jobID) == 0 || string(jobID) == "null" {
		return nil, errors.New(`Missing jobId: give the job id, e.g. "1" (the jobs command lists them).`) //lint:ignore ST1005 user-facing text
	}
	var id string
	if err := json.Unmarshal(jobID, &id); err != nil {
		var n float64
		if err := json.Unmarshal(jobID, &n); err != nil || n != math.Trunc(n) {
			return nil, fmt.Errorf(`Invalid jobId: expected a job id such as "1", got %s`, jobID) //lint:ignore ST1005 user-facing text
		}
		id = strconv.FormatFloat(n, 'f', -1, 64)
	}
	j, ok := m.Get(id)
	if !ok {
		return nil, errors.New(tools.NoJob(m, strings.TrimSpace(id)))
	}
	return j, nil
}

// async runs f in its own goroutine, waited for by Serve, so that a job
// command that waits does not hold up the commands after it.
func (s *server) async(f func(ctx context.Context)) {
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		f(s.base)
	}()
}

func (s *server) listJobs(c *command, _ *noParams) {
	if s.cfg.Jobs == nil {
		s.fail(c, errNoJobs)
		return
	}
	list := []JobInfo{}
	for _, j := range s.cfg.Jobs.List() {
		list = append(list, jobInfo(j, j.State()))
	}
	s.ok(c, map[string]any{"jobs": list})
}

func (s *server) jobOutput(c *command, p *jobOutputParams) {
	j, err := s.findJob(p.JobID)
	if err != nil {
		s.fail(c, err)
		return
	}
	secs := 0.0
	if p.WaitSeconds != nil && !math.IsNaN(*p.WaitSeconds) && *p.WaitSeconds > 0 {
		secs = min(*p.WaitSeconds, tools.MaxWaitSeconds)
	}
	if secs == 0 {
		s.ok(c, outputData(j, j.State()))
		return
	}
	s.async(func(ctx context.Context) {
		st := j.Wait(ctx, time.Duration(secs*float64(time.Second)))
		s.ok(c, outputData(j, st))
	})
}

func (s *server) jobInput(c *command, p *jobInputParams) {
	j, err := s.findJob(p.JobID)
	if err != nil {
		s.fail(c, err)
		return
	}
	if p.Text == nil {
		s.fail(c, errors.New(`Invalid text: give the text to type as a string, e.g. "y\n".`)) //lint:ignore ST1005 user-facing text
		return
	}
	if *p.Text == "" {
		s.fail(c, errors.New("Nothing to type: text is empty.")) //lint:ignore ST1005 user-facing text
		return
	}
	if st := j.State(); st.Ended() {
		s.fail(c, errors.New(bash.JobSentence(j.ID(), st)+" It takes no more input."))
		return
	}
	if err := j.Input(*p.Text); err != nil {
		s.fail(c, errors.New(bash.JobSentence(j.ID(), j.Final())+" It takes no more input."))
		return
	}
	s.async(func(ctx context.Context) {
		// Give the program InputSettle to answer; a job that ends answers at once.
		t := time.NewTimer(tools.InputSettle)
		defer t.Stop()
		select {
		case <-j.Done():
			s.ok(c, outputData(j, j.Final()))
			return
		case <-t.C:
		case <-ctx.Done():
		}
		s.ok(c, outputData(j, j.State()))
	})
}

func (s *server) jobKill(c *command, p *jobKillParams) {
	j, err := s.findJob(p.JobID)
	if err != nil {
		s.fail(c, err)
		return
	}
	if st := j.State(); st.Ended() {
		d := outputData(j, st)
		d.AlreadyEnded = true
		s.ok(c, d)
		return
	}
	s.async(func(context.Context) { s.ok(c, outputData(j, j.Kill())) })
}

package rpc

// bash and abort_bash: the client's own commands, run in the session like
// the user's `!` commands (unconfined unless set_sandbox says otherwise),
// or, with background, as a job (jobs.go).

import (
	"agentsh/internal/agent"
	"context"
	"errors"
)

// Bash command types.
const (
	CmdBash      = "bash"
	CmdAbortBash = "abort_bash"
)

func init() {
	register(
		cmd(CmdBash, (*server).bash),
		cmd(CmdAbortBash, (*server).abortBashCmd).answeredDuringFileWork(),
	)
}

// bashParams is bash {command, background?}.
type bashParams struct {
	Command    *string `json:"command"`
	Background bool    `json:"background"`
}

func (s *server) bash(c *command, p *bashParams) {
	cmdline := ""
	if p.Command != nil {
		cmdline = *p.Command
	}
	if p.Background {
		s.startBackground(c, cmdline)
	} else {
		s.startBash(c, cmdline)
	}
}

// abortBashCmd is abort_bash: the running bash commands are cancelled
// (answered without waiting for them).
func (s *server) abortBashCmd(c *command, _ *noParams) {
	s.abortBash()
	s.ok(c, nil)
}

// startBash runs cmdline in the session and answers with its result.
func (s *server) startBash(c *command, cmdline string) {
	s.mu.Lock()
	ctx, cancel := context.WithCancel(s.base)
	j := &job{cancel: cancel, done: make(chan struct{})}
	s.bashes[j] = struct{}{}
	sess := s.sess
	policy := s.sbox.bashPolicy(sess)
	s.wg.Add(1)
	s.mu.Unlock()
	go func() {
		defer s.wg.Done()
		defer close(j.done)
		defer cancel()
		dir := sess.Cwd()
		run, err := sess.ExecuteBashRun(ctx, cmdline, nil, agent.BashOptions{Sandbox: policy})
		s.mu.Lock()
		delete(s.bashes, j)
		s.mu.Unlock()
		data := BashData{BashRun: run, WorkingDir: dir}
		if run.Job != nil {
			data.JobID = run.Job.ID()
		}
		var save *agent.SaveError
		switch {
		case errors.As(err, &save):
			// The command ran: its output must not be lost because the
			// session file could not take it.
			data.SaveError = err.Error()
			s.ok(c, data)
		case err != nil:
			s.fail(c, err)
		default:
			s.ok(c, data)
		}
	}()
}

// BashData is the bash command's data: the BashResult's fields, plus
// artifactError when a truncated output could not be saved in full and
// saveError when the run could not be written to the session file, and
// jobId when the command waited for input and became that job (spec §9).
type BashData struct {
	agent.BashRun
	// WorkingDir is the directory the command started in (the reference's
	// field; a `cd` in the command moves the next one's).
	WorkingDir string `json:"workingDir,omitempty"`
	SaveError  string `json:"saveError,omitempty"`
	JobID      string `json:"jobId,omitempty"`
}

// startBackground runs a bash command with background: true as a user job
// and answers with the job at once.
func (s *server) startBackground(c *command, cmdline string) {
	if s.cfg.Jobs == nil {
		s.fail(c, errNoJobs)
		return
	}
	s.mu.Lock()
	sess := s.sess
	policy := s.sbox.bashPolicy(sess)
	s.mu.Unlock()
	j, err := sess.StartJobIn(s.cfg.Jobs, cmdline, policy)
	if err != nil {
		s.fail(c, err)
		return
	}
	s.ok(c, jobInfo(j, j.State()))
}

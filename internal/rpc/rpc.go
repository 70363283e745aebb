// Package rpc serves an AgentSession over newline-delimited JSON (spec §7,
// docs/rpc.md): commands on one stream, responses and agent events on the
// other, shapes compatible with the reference's RPC protocol.
//
// Commands are dispatched from a table (table.go), each decoded into its
// own parameter type, in arrival order; the quick ones are answered at
// once, while the long-running ones (a prompt's agent run, a bash command)
// run in their own goroutines, so a later command such as abort_bash is read
// and handled while they run. Every output line is written whole under one
// mutex, so lines never interleave.
package rpc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"

	"agentsh/internal/agent"
	"agentsh/internal/jobs"
	"agentsh/internal/llm"
	"agentsh/internal/sandbox"
	"agentsh/internal/tools"
)

// Config is what Serve needs to run and replace sessions.
type Config struct {
	// Session is the session Serve starts with; nil: NewSession's.
	Session *agent.AgentSession
	// NewSession makes the fresh session new_session switches to (and the
	// one Serve starts with when Session is nil). Required.
	NewSession func() (*agent.AgentSession, error)
	// Tools is the registry offered to the model (nil = no tools).
	Tools *tools.Registry
	// Jobs holds the background jobs: the user's (bash with background)
	// and, when the model's bash tool is given the same manager, the
	// model's. Serve reports every job started while it runs as job_start,
	// job_update and job_end events. nil = the job commands fail.
	Jobs *jobs.Manager
	// OpenSession opens a saved session file for switch_session (its
	// messages, appended to from then on). nil = switch_session fails.
	OpenSession func(path string) (*agent.AgentSession, error)
	// Models is the current model and thinking level, and answers the
	// model commands; nil: no model (prompts fail with a "no model
	// configured" error while bash still works). Retry is the auto-retry
	// of failed model calls (models.go).
	Models *agent.Models
	Retry  *agent.Retry
}

// ProtocolVersion is the RPC protocol agentsh speaks: the reference's
// version 1, every frame one whole JSON line. (Its version 2 splits large
// frames into rpc_chunk lines, which agentsh neither writes nor reads.)
const ProtocolVersion = 1

// maxFrameBytes is the ready line's limit of a frame (and of a reassembled
// one): agentsh reads and writes lines of any length, so it says the
// largest integer a JSON client holds exactly (2^53-1).
const maxFrameBytes = 1<<53 - 1

// readyLine is the first line Serve writes, in the reference's shape.
type readyLine struct {
	Type                      string `json:"type"`
	ProtocolVersion           int    `json:"protocolVersion"`
	SupportedProtocolVersions []int  `json:"supportedProtocolVersions"`
	MaxFrameBytes             int64  `json:"maxFrameBytes"`
	MaxReassembledFrameBytes  int64  `json:"maxReassembledFrameBytes"`
}

// ErrNoModel is the prompt error when Config.Provider is nil.
var ErrNoModel = fmt.Errorf("no model configured: use --model provider/model (providers: %s)", strings.Join(llm.Providers, ", "))

// errStreaming refuses a prompt while another one runs.
var errStreaming = errors.New("Agent is already processing. Use steer() or followUp() to queue messages, or wait for completion.") //lint:ignore ST1005 the reference's text

// Response answers one command.
type Response struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Type    string          `json:"type"` // always "response"
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    any             `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
	// Code is a machine-readable reason of some errors (the reference's
	// "session_busy", "stale_cursor").
	Code string `json:"code,omitempty"`
}

// job is a running prompt or bash command.
type job struct {
	cancel context.CancelFunc
	done   chan struct{}
}

type server struct {
	cfg  Config
	base context.Context

	outMu    sync.Mutex
	out      io.Writer
	writeErr error
	outGone  chan struct{} // closed at the first failed write
	stopped  bool          // Serve has returned: late job events are dropped

	mu   sync.Mutex
	sess *agent.AgentSession
	sbox sandboxChoice // the client's set_sandbox, kept across new_session
	// autoCompact is the client's set_auto_compaction, kept across
	// new_session and switch_session (nil: the settings decide).
	autoCompact *bool
	// runner runs the session's prompts one at a time (a run ends for the
	// client when its agent_end is written).
	runner *agent.Runner
	// queuedBy is the command that queued the latest steer or follow-up:
	// a run started for queued input reports its failure to it.
	queuedBy *command
	bashes   map[*job]struct{}
	// compactions are the running compact commands (abort stops them).
	compactions map[*job]struct{}
	wg          sync.WaitGroup
}

// Serve reads commands from in and writes responses and events to out until
// in ends (EOF: nil), a write to out fails (the client closed it: that
// error), or ctx is cancelled (ctx.Err()). Its first line is
// {"type":"ready"}. Before it returns, a running prompt and running bash
// commands are cancelled and waited for, so none of their processes is left.
// Idle cached shells belong to the session's executor (bash.CloseAll on exit).
//
// When ctx or a failed write ends it first, a Read blocked on in is left
// behind until in returns.
func Serve(ctx context.Context, in io.Reader, out io.Writer, cfg Config) error {
	if cfg.NewSession == nil {
		return errors.New("rpc: Config.NewSession is required")
	}
	if cfg.Models == nil {
		cfg.Models = agent.ModelsOf(nil, "")
	}
	sess := cfg.Session
	if sess == nil {
		var err error
		if sess, err = cfg.NewSession(); err != nil {
			return err
		}
	}
	base, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{cfg: cfg, base: base, out: out, outGone: make(chan struct{}), sess: sess, runner: agent.NewRunner(base), bashes: map[*job]struct{}{}, compactions: map[*job]struct{}{},
		sbox: sandboxChoice{model: sess.Sandbox(), bash: sandbox.Off}}
	s.writeLine(readyLine{Type: "ready", ProtocolVersion: ProtocolVersion, SupportedProtocolVersions: []int{ProtocolVersion},
		MaxFrameBytes: maxFrameBytes, MaxReassembledFrameBytes: maxFrameBytes})
	if cfg.Jobs != nil {
		cfg.Jobs.OnChange(s.jobEvent)
		defer cfg.Jobs.OnChange(nil)
	}

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	go func() {
		r := bufio.NewReaderSize(in, 64*1024)
		for {
			line, err := r.ReadBytes('\n')
			if len(line) > 0 {
				select {
				case lines <- line:
				case <-base.Done():
					readErr <- base.Err()
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()

	// File work (switch_session's load, export_html's write) runs beside
	// the loop: while it goes on, get_state, abort and abort_bash are
	// answered at once (unless a command sent before them waits: they keep
	// their place after it), and every other command waits in backlog, then
	// runs in its order, as if the file work had been done on the loop.
	var (
		result   error
		fileDone <-chan struct{} // the running file work's end; nil = none
		backlog  []*command
		ended    bool // in is at its end: finish the backlog, then return
	)
loop:
	for {
		for fileDone == nil && len(backlog) > 0 {
			c := backlog[0]
			backlog = backlog[1:]
			fileDone = s.dispatch(c)
		}
		if ended && fileDone == nil {
			break
		}
		lineC := lines
		if ended {
			lineC = nil
		}
		select {
		case line := <-lineC:
			c := s.parseLine(line)
			switch {
			case c == nil:
			case fileDone == nil:
				fileDone = s.dispatch(c)
			case answersDuringFileWork(c) && len(backlog) == 0:
				s.dispatch(c)
			default:
				backlog = append(backlog, c)
			}
		case <-fileDone:
			fileDone = nil
		case err := <-readErr:
			if !errors.Is(err, io.EOF) {
				result = err
				break loop
			}
			ended = true
		case <-s.outGone:
			// Nobody reads the answers any more: shut down as on EOF.
			break loop
		case <-ctx.Done():
			result = ctx.Err()
			break loop
		}
	}
	cancel()
	s.mu.Lock()
	s.sess.AbortBash()
	s.mu.Unlock()
	s.runner.Wait()
	s.wg.Wait()
	s.outMu.Lock()
	s.stopped = true
	if result == nil {
		result = s.writeErr
	}
	s.outMu.Unlock()
	return result
}

// writeLine writes v as one JSON line.
func (s *server) writeLine(v any) {
	var b []byte
	var err error
	if e, ok := v.(agent.Event); ok {
		// Already compact: json.Marshal would re-scan every snapshot.
		b, err = e.MarshalJSON()
	} else {
		b, err = json.Marshal(v)
	}
	if err != nil {
		b, _ = json.Marshal(Response{Type: "response", Command: "internal", Error: "encode output: " + err.Error()})
	}
	b = append(b, '\n')
	s.outMu.Lock()
	defer s.outMu.Unlock()
	if s.writeErr != nil || s.stopped {
		return
	}
	if _, err := s.out.Write(b); err != nil {
		s.writeErr = err
		close(s.outGone)
	}
}

func (s *server) ok(c *command, data any) {
	s.writeLine(Response{ID: c.ID, Type: "response", Command: c.Type, Success: true, Data: data})
}

func (s *server) fail(c *command, err error) {
	s.writeLine(Response{ID: c.ID, Type: "response", Command: c.Type, Error: err.Error()})
}

// failCode is fail with a machine-readable code.
func (s *server) failCode(c *command, err error, code string) {
	s.writeLine(Response{ID: c.ID, Type: "response", Command: c.Type, Error: err.Error(), Code: code})
}

// parseLine parses one input line into a command (table.go); an empty
// line is nil, and so is a line that does not parse, whose error is
// answered.
func (s *server) parseLine(line []byte) *command {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	c, err := parseCommand(line)
	if err != nil {
		s.writeLine(Response{Type: "response", Command: "parse", Error: "Failed to parse command: " + err.Error()})
		return nil
	}
	return c
}

// fileWork runs work beside the command loop (dispatch) and returns the
// channel closed when it is over; Serve waits for it before returning.
func (s *server) fileWork(work func()) <-chan struct{} {
	done := make(chan struct{})
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer close(done)
		work()
	}()
	return done
}

// The run bookkeeping: which prompt runs (server.runner), who queued the
// latest steer or follow-up (server.queuedBy), and the starting, queueing,
// chaining and aborting of runs, from here to adopt. The command handlers
// (prompt.go) only check their parameters and call promptOrQueue and
// queueOrRun.

// promptOrQueue starts a run on text for c, or, while one runs, queues
// text as behavior says (behaviorSteer or behaviorFollowUp; "" refuses it
// with errStreaming). c is answered before the run's first event.
func (s *server) promptOrQueue(c *command, text, behavior string) {
	s.mu.Lock()
	if s.runner.Busy() {
		if behavior == "" {
			s.mu.Unlock()
			s.fail(c, errStreaming)
			return
		}
		s.queueLocked(c, behavior == behaviorSteer, text)
		s.mu.Unlock()
		s.ok(c, nil)
		return
	}
	launch := s.runLocked(c, func(ctx context.Context, sess *agent.AgentSession, emit func(agent.Event)) error {
		provider, model := s.currentModel()
		return sess.Prompt(ctx, text, provider, model, s.cfg.Tools, emit)
	})
	s.mu.Unlock()
	// Acknowledge before the run can emit its first event.
	s.ok(c, nil)
	launch()
}

// queueOrRun queues text as a steer or a follow-up for the running
// prompt, or, when none runs, starts a run on it (as the reference's
// queue drain does when idle). c is answered before the run's first
// event.
func (s *server) queueOrRun(c *command, steer bool, text string) {
	s.mu.Lock()
	s.queueLocked(c, steer, text)
	var launch func()
	if !s.runner.Busy() {
		launch = s.runLocked(c, s.continueRun)
	}
	s.mu.Unlock()
	s.ok(c, nil)
	if launch != nil {
		launch()
	}
}

// queueLocked queues text as a steer or a follow-up of the session's run.
func (s *server) queueLocked(c *command, steer bool, text string) {
	if steer {
		s.sess.Steer(text)
	} else {
		s.sess.FollowUp(text)
	}
	s.queuedBy = c
}

// continueRun runs the agent on the session's queued input.
func (s *server) continueRun(ctx context.Context, sess *agent.AgentSession, emit func(agent.Event)) error {
	provider, model := s.currentModel()
	return sess.Continue(ctx, provider, model, s.cfg.Tools, emit)
}

// runLocked makes run the session's running prompt and returns the func
// that starts it (called after the command's acknowledgement, so no event
// comes before it). A failure is reported to c; an abort only by agent_end.
// Input queued after the run's last look at the queues is not left behind:
// a run that ended well is followed by one on it. Called with s.mu held,
// when no run is under way.
func (s *server) runLocked(c *command, run func(ctx context.Context, sess *agent.AgentSession, emit func(agent.Event)) error) (launch func()) {
	if c == nil { // not expected: queued input always has its command
		c = &command{Type: CmdPrompt}
	}
	sess := s.sess
	ready := make(chan struct{}) // closed by launch, once self is set
	var self *agent.Run
	var next func()
	self, err := s.runner.Start(func(ctx context.Context) error {
		<-ready
		// The run is over for the client once agent_end is written: a
		// prompt sent after it must not find this one still running.
		end := func(failed bool) {
			s.mu.Lock()
			defer s.mu.Unlock()
			if !self.End() {
				return
			}
			if !failed && ctx.Err() == nil && s.sess == sess && sess.QueuedInputCount() > 0 {
				next = s.runLocked(s.queuedBy, s.continueRun)
			}
		}
		err := run(ctx, sess, func(e agent.Event) {
			if e.Type == agent.EventAgentEnd {
				end(e.Error != "")
			}
			s.writeLine(e)
		})
		end(err != nil) // a run that ended without agent_end
		if err != nil && ctx.Err() == nil {
			s.fail(c, err)
		}
		return nil
	}, func(*agent.Run, error) {
		if next != nil {
			next()
		}
	})
	if err != nil { // not expected: the callers hold s.mu and saw no run
		return func() { s.fail(c, err) }
	}
	return func() {
		s.attachModels(sess)
		close(ready)
	}
}

// abortRuns cancels the running prompt and waits for it, until none runs.
func (s *server) abortRuns() {
	for {
		r := s.runner.Abort()
		if r == nil {
			return
		}
		r.Wait()
		r.End() // its agent_end may not have come (a run that failed)
	}
}

// abortBash cancels every running RPC bash command (and any other bang
// command of the session) and returns them.
func (s *server) abortBash() []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	js := make([]*job, 0, len(s.bashes))
	for j := range s.bashes {
		j.cancel()
		js = append(js, j)
	}
	s.sess.AbortBash()
	return js
}

func (s *server) waitJobs(js []*job) {
	for _, j := range js {
		<-j.done
	}
}

// stopWork cancels the running prompt and bash commands and waits for them.
func (s *server) stopWork() {
	bashes := s.abortBash()
	s.abortRuns()
	s.waitJobs(bashes)
}

// adopt makes sess the session commands go to, with the client's sandbox.
// The queue modes, like the sandbox, are the client's choice: kept.
func (s *server) adopt(sess *agent.AgentSession) {
	s.mu.Lock()
	old := s.sess
	_ = sess.SetSteeringMode(old.SteeringMode())
	_ = sess.SetFollowUpMode(old.FollowUpMode())
	_ = sess.SetInterruptMode(old.InterruptMode())
	if s.autoCompact != nil {
		sess.SetAutoCompaction(*s.autoCompact)
	}
	s.sess = sess
	s.queuedBy = nil
	sess.SetSandbox(s.sbox.model)
	s.mu.Unlock()
}

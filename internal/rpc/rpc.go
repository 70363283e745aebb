// Package rpc serves an AgentSession over newline-delimited JSON (SPEC §7,
// docs/rpc.md): commands on one stream, responses and agent events on the
// other, shapes compatible with the reference's RPC protocol.
//
// Commands are dispatched in arrival order; the quick ones are answered at
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

	"agentsh/internal/jobs"
	"agentsh/internal/llm"
	"agentsh/internal/sandbox"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// Config is what Serve needs to run and replace sessions.
type Config struct {
	// NewSession makes the session Serve starts with and the fresh one
	// new_session switches to. Required.
	NewSession func() (*session.AgentSession, error)
	// Provider and Model answer prompts; a nil Provider makes prompt fail
	// with a "no model configured" error while bash still works.
	Provider llm.Provider
	Model    string
	// Tools is the registry offered to the model (nil = no tools).
	Tools *tools.Registry
	// Jobs holds the background jobs: the user's (bash with background)
	// and, when the model's bash tool is given the same manager, the
	// model's. Serve reports every job started while it runs as job_start,
	// job_update and job_end events. nil = the job commands fail.
	Jobs *jobs.Manager
	// Models, when set, is the current model and thinking level (it wins
	// over Provider and Model) and answers the model commands; Retry is
	// the auto-retry of failed model calls (models.go).
	Models *session.Models
	Retry  *session.Retry
}

// Command types.
const (
	CmdPrompt      = "prompt"
	CmdAbort       = "abort"
	CmdGetState    = "get_state"
	CmdGetMessages = "get_messages"
	CmdNewSession  = "new_session"
	CmdBash        = "bash"
	CmdAbortBash   = "abort_bash"
	CmdSetSandbox  = "set_sandbox"
)

// ErrNoModel is the prompt error when Config.Provider is nil.
var ErrNoModel = fmt.Errorf("no model configured: use --model provider/model (providers: %s)", strings.Join(llm.Providers, ", "))

// errStreaming refuses a prompt while another one runs.
var errStreaming = errors.New("Agent is already streaming: send abort first") //lint:ignore ST1005 user-facing text

// command is one input line. ID is kept raw so it is echoed exactly.
type command struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Type    *string         `json:"type"`
	Message *string         `json:"message,omitempty"`
	Command *string         `json:"command,omitempty"`
	// Background makes bash start a job; JobID, WaitSeconds and Text are
	// the job commands' arguments.
	Background  bool            `json:"background,omitempty"`
	JobID       json.RawMessage `json:"jobId,omitempty"`
	WaitSeconds *float64        `json:"waitSeconds,omitempty"`
	Text        *string         `json:"text,omitempty"`
	// Mode, Yolo and Bash are set_sandbox's.
	Mode *string `json:"mode,omitempty"`
	Yolo *bool   `json:"yolo,omitempty"`
	Bash *string `json:"bash,omitempty"`
	// Models, thinking and retry (models.go): set_model's Provider and
	// ModelID, set_thinking_level's Level, set_auto_retry's Enabled.
	Provider *string `json:"provider,omitempty"`
	ModelID  *string `json:"modelId,omitempty"`
	Level    *string `json:"level,omitempty"`
	Enabled  *bool   `json:"enabled,omitempty"`
}

// Response answers one command.
type Response struct {
	ID      json.RawMessage `json:"id,omitempty"`
	Type    string          `json:"type"` // always "response"
	Command string          `json:"command"`
	Success bool            `json:"success"`
	Data    any             `json:"data,omitempty"`
	Error   string          `json:"error,omitempty"`
}

// ModelInfo is get_state's model.
type ModelInfo struct {
	Provider string `json:"provider"`
	ID       string `json:"id"`
}

// State is get_state's data.
type State struct {
	Model              *ModelInfo `json:"model"`
	IsStreaming        bool       `json:"isStreaming"`
	IsCompacting       bool       `json:"isCompacting"`
	IsBashRunning      bool       `json:"isBashRunning"`
	SessionFile        string     `json:"sessionFile,omitempty"`
	SessionID          string     `json:"sessionId"`
	MessageCount       int        `json:"messageCount"`
	QueuedMessageCount int        `json:"queuedMessageCount"`
	Sandbox            Sandbox    `json:"sandbox"`
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

	mu     sync.Mutex
	sess   *session.AgentSession
	sbox   sandboxChoice // the client's set_sandbox, kept across new_session
	prompt *job
	bashes map[*job]struct{}
	wg     sync.WaitGroup
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
	sess, err := cfg.NewSession()
	if err != nil {
		return err
	}
	base, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{cfg: cfg, base: base, out: out, outGone: make(chan struct{}), sess: sess, bashes: map[*job]struct{}{},
		sbox: sandboxChoice{model: sess.Sandbox(), bash: sandbox.Off}}
	s.writeLine(map[string]string{"type": "ready"})
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

	var result error
loop:
	for {
		select {
		case line := <-lines:
			s.handleLine(line)
		case err := <-readErr:
			if !errors.Is(err, io.EOF) {
				result = err
			}
			break loop
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
	b, err := json.Marshal(v)
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
	s.writeLine(Response{ID: c.ID, Type: "response", Command: *c.Type, Success: true, Data: data})
}

func (s *server) fail(c *command, err error) {
	s.writeLine(Response{ID: c.ID, Type: "response", Command: *c.Type, Error: err.Error()})
}

func (s *server) handleLine(line []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var c command
	err := json.Unmarshal(line, &c)
	if err == nil && c.Type == nil {
		err = errors.New(`missing "type"`)
	}
	if err != nil {
		s.writeLine(Response{Type: "response", Command: "parse", Error: "Failed to parse command: " + err.Error()})
		return
	}
	if string(c.ID) == "null" {
		c.ID = nil
	}
	switch *c.Type {
	case CmdPrompt:
		s.startPrompt(&c)
	case CmdAbort:
		s.waitJobs(s.cancelPrompt())
		s.ok(&c, nil)
	case CmdGetState:
		s.ok(&c, s.state())
	case CmdGetMessages:
		s.getMessages(&c)
	case CmdNewSession:
		s.newSession(&c)
	case CmdBash:
		if c.Background {
			s.startBackground(&c)
		} else {
			s.startBash(&c)
		}
	case CmdJobs:
		s.listJobs(&c)
	case CmdJobOutput:
		s.jobOutput(&c)
	case CmdJobInput:
		s.jobInput(&c)
	case CmdJobKill:
		s.jobKill(&c)
	case CmdAbortBash:
		s.abortBash()
		s.ok(&c, nil)
	case CmdSetSandbox:
		s.setSandbox(&c)
	// models, thinking and retry (models.go)
	case CmdSetModel, CmdCycleModel, CmdGetAvailableModels, CmdSetThinkingLevel, CmdCycleThinkingLevel,
		CmdSetAutoRetry, CmdAbortRetry:
		s.modelCommand(&c)
	default:
		s.writeLine(Response{Type: "response", Command: *c.Type, Error: "Unknown command: " + *c.Type})
	}
}

func (s *server) startPrompt(c *command) {
	if p, _ := s.currentModel(); p == nil {
		s.fail(c, ErrNoModel)
		return
	}
	if c.Message == nil || strings.TrimSpace(*c.Message) == "" {
		s.fail(c, errors.New(`prompt needs a non-empty "message"`))
		return
	}
	s.mu.Lock()
	if s.prompt != nil {
		s.mu.Unlock()
		s.fail(c, errStreaming)
		return
	}
	ctx, cancel := context.WithCancel(s.base)
	j := &job{cancel: cancel, done: make(chan struct{})}
	s.prompt = j
	sess := s.sess
	s.wg.Add(1)
	s.mu.Unlock()
	s.attachModels(sess)
	provider, model := s.currentModel()
	// Acknowledge before the run can emit its first event.
	s.ok(c, nil)
	text := *c.Message
	go func() {
		defer s.wg.Done()
		defer close(j.done)
		defer cancel()
		err := sess.Prompt(ctx, text, provider, model, s.cfg.Tools, func(e session.Event) { s.writeLine(e) })
		s.mu.Lock()
		if s.prompt == j {
			s.prompt = nil
		}
		s.mu.Unlock()
		// An abort is reported by agent_end (aborted: true), not as a failure.
		if err != nil && ctx.Err() == nil {
			s.fail(c, err)
		}
	}()
}

// cancelPrompt cancels the running prompt and returns it (nil if none).
func (s *server) cancelPrompt() []*job {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.prompt == nil {
		return nil
	}
	s.prompt.cancel()
	return []*job{s.prompt}
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

func (s *server) startBash(c *command) {
	cmd := ""
	if c.Command != nil {
		cmd = *c.Command
	}
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
		run, err := sess.ExecuteBashRun(ctx, cmd, nil, session.BashOptions{Sandbox: policy})
		s.mu.Lock()
		delete(s.bashes, j)
		s.mu.Unlock()
		data := BashData{BashRun: run}
		if run.Job != nil {
			data.JobID = run.Job.ID()
		}
		var save *session.SaveError
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
// jobId when the command waited for input and became that job (SPEC §9).
type BashData struct {
	session.BashRun
	SaveError string `json:"saveError,omitempty"`
	JobID     string `json:"jobId,omitempty"`
}

func (s *server) state() State {
	s.mu.Lock()
	sess, streaming, sbox := s.sess, s.prompt != nil, s.sbox
	s.mu.Unlock()
	st := State{
		Sandbox:            sbox.state(),
		IsStreaming:        streaming,
		IsBashRunning:      sess.IsBashRunning(),
		SessionID:          sess.ID(),
		MessageCount:       len(sess.Messages()),
		QueuedMessageCount: len(sess.QueuedMessages()),
	}
	if p, m := s.currentModel(); p != nil {
		st.Model = &ModelInfo{Provider: p.Name(), ID: m}
	}
	if store := sess.Store(); store != nil {
		st.SessionFile = store.Path()
	}
	return st
}

func (s *server) getMessages(c *command) {
	s.mu.Lock()
	sess := s.sess
	s.mu.Unlock()
	msgs := sess.Messages()
	raw := make([]json.RawMessage, 0, len(msgs))
	for _, m := range msgs {
		b, err := session.MarshalMessage(m)
		if err != nil {
			s.fail(c, err)
			return
		}
		raw = append(raw, b)
	}
	s.ok(c, map[string]any{"messages": raw})
}

// newSession stops the running prompt and bash commands, waits for them,
// then switches to a fresh session from the factory (the old one stays on
// failure).
func (s *server) newSession(c *command) {
	js := append(s.cancelPrompt(), s.abortBash()...)
	s.waitJobs(js)
	sess, err := s.cfg.NewSession()
	if err != nil {
		s.fail(c, err)
		return
	}
	s.mu.Lock()
	s.sess = sess
	sess.SetSandbox(s.sbox.model)
	s.mu.Unlock()
	s.ok(c, map[string]bool{"cancelled": false})
}

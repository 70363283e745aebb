// Package rpc serves an AgentSession over newline-delimited JSON (spec §7,
// docs/rpc.md): commands on one stream, responses and agent events on the
// other, shapes compatible with the reference's RPC protocol. Besides
// prompting, its queues and bash, the commands cover the session
// (session_cmds.go), models and thinking levels (models.go), compaction,
// export, jobs and the sandbox, each in a file of that name.
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

	"agentsh/internal/agent"
	"agentsh/internal/jobs"
	"agentsh/internal/llm"
	"agentsh/internal/sandbox"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// Config is what Serve needs to run and replace sessions.
type Config struct {
	// Session is the session Serve starts with; nil: NewSession's.
	Session *agent.AgentSession
	// NewSession makes the fresh session new_session switches to (and the
	// one Serve starts with when Session is nil). Required.
	NewSession func() (*agent.AgentSession, error)
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
	// OpenSession opens a saved session file for switch_session (its
	// messages, appended to from then on). nil = switch_session fails.
	OpenSession func(path string) (*agent.AgentSession, error)
	// Models, when set, is the current model and thinking level (it wins
	// over Provider and Model) and answers the model commands; Retry is
	// the auto-retry of failed model calls (models.go).
	Models *agent.Models
	Retry  *agent.Retry
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
	// Prompting and the session, as the reference's clients send them.
	CmdNegotiateProtocol    = "negotiate_protocol"
	CmdSteer                = "steer"
	CmdFollowUp             = "follow_up"
	CmdAbortAndPrompt       = "abort_and_prompt"
	CmdSetSteeringMode      = "set_steering_mode"
	CmdSetFollowUpMode      = "set_follow_up_mode"
	CmdSetInterruptMode     = "set_interrupt_mode"
	CmdGetMessagesPage      = "get_messages_page"
	CmdGetLastAssistantText = "get_last_assistant_text"
	CmdGetSessionStats      = "get_session_stats"
	CmdSetSessionName       = "set_session_name"
	CmdSwitchSession        = "switch_session"
	CmdGetAvailableCommands = "get_available_commands"
)

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
	// OutputPath is export_html's (i15-export).
	OutputPath *string `json:"outputPath,omitempty"`
	// Prompting and the session (i15-rpc): prompt's streamingBehavior,
	// negotiate_protocol's version, get_messages_page's cursor and limit,
	// set_session_name's name, new_session's parent, switch_session's path.
	StreamingBehavior *string         `json:"streamingBehavior,omitempty"`
	ProtocolVersion   json.RawMessage `json:"protocolVersion,omitempty"`
	Cursor            *string         `json:"cursor,omitempty"`
	Limit             *float64        `json:"limit,omitempty"`
	Name              *string         `json:"name,omitempty"`
	ParentSession     *string         `json:"parentSession,omitempty"`
	SessionPath       *string         `json:"sessionPath,omitempty"`
	// Compaction (compact.go): compact's customInstructions,
	// set_auto_compaction's enabled.
	CustomInstructions *string `json:"customInstructions,omitempty"`
	Enabled            *bool   `json:"enabled,omitempty"`
	// Models, thinking and retry (models.go): set_model's Provider and
	// ModelID, set_thinking_level's Level (set_auto_retry's enabled is Enabled).
	Provider *string `json:"provider,omitempty"`
	ModelID  *string `json:"modelId,omitempty"`
	Level    *string `json:"level,omitempty"`
}

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

// ModelInfo is a model in the reference's Model shape (get_state's model,
// set_model's answer). What agentsh does not know is zero.
type ModelInfo = agent.Model

// State is get_state's data: the reference's RpcSessionState, plus
// isBashRunning and sandbox.
type State struct {
	Model                 *ModelInfo `json:"model,omitempty"`
	ThinkingLevel         string     `json:"thinkingLevel,omitempty"`
	IsStreaming           bool       `json:"isStreaming"`
	IsCompacting          bool       `json:"isCompacting"`
	SteeringMode          string     `json:"steeringMode"`
	FollowUpMode          string     `json:"followUpMode"`
	InterruptMode         string     `json:"interruptMode"`
	SessionFile           string     `json:"sessionFile,omitempty"`
	SessionID             string     `json:"sessionId"`
	SessionName           string     `json:"sessionName,omitempty"`
	AutoCompactionEnabled bool       `json:"autoCompactionEnabled"`
	FastModeEnabled       bool       `json:"fastModeEnabled"`
	FastModeActive        bool       `json:"fastModeActive"`
	TokensPerSecond       *float64   `json:"tokensPerSecond"`
	MessageCount          int        `json:"messageCount"`
	QueuedMessageCount    int        `json:"queuedMessageCount"`
	TodoPhases            []any      `json:"todoPhases"`
	// SystemPrompt is the system prompt the model gets now (one part), and
	// ContextUsage how full its context is (both absent without a model).
	SystemPrompt  []string            `json:"systemPrompt,omitempty"`
	ContextUsage  *agent.ContextUsage `json:"contextUsage,omitempty"`
	IsBashRunning bool                `json:"isBashRunning"`
	Sandbox       Sandbox             `json:"sandbox"`
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
	prompt      *job
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
	sess := cfg.Session
	if sess == nil {
		var err error
		if sess, err = cfg.NewSession(); err != nil {
			return err
		}
	}
	base, cancel := context.WithCancel(ctx)
	defer cancel()
	s := &server{cfg: cfg, base: base, out: out, outGone: make(chan struct{}), sess: sess, bashes: map[*job]struct{}{}, compactions: map[*job]struct{}{},
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
			case answersDuringFileWork(*c.Type) && len(backlog) == 0:
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
	s.writeLine(Response{ID: c.ID, Type: "response", Command: *c.Type, Success: true, Data: data})
}

func (s *server) fail(c *command, err error) {
	s.writeLine(Response{ID: c.ID, Type: "response", Command: *c.Type, Error: err.Error()})
}

// failCode is fail with a machine-readable code.
func (s *server) failCode(c *command, err error, code string) {
	s.writeLine(Response{ID: c.ID, Type: "response", Command: *c.Type, Error: err.Error(), Code: code})
}

// answersDuringFileWork reports whether a command of type typ is handled
// at once while file work runs (Serve): it reads the state or stops work,
// and nothing it does depends on the file work's outcome.
func answersDuringFileWork(typ string) bool {
	return typ == CmdGetState || typ == CmdAbort || typ == CmdAbortBash
}

// parseLine parses one input line into a command; an empty line is nil,
// and so is a line that does not parse, whose error is answered.
func (s *server) parseLine(line []byte) *command {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return nil
	}
	var c command
	err := json.Unmarshal(line, &c)
	if err == nil && c.Type == nil {
		err = errors.New(`missing "type"`)
	}
	if err != nil {
		s.writeLine(Response{Type: "response", Command: "parse", Error: "Failed to parse command: " + err.Error()})
		return nil
	}
	if string(c.ID) == "null" {
		c.ID = nil
	}
	return &c
}

// dispatch handles one command. For file work that goes on beside the
// loop it returns a channel closed at its end (nil for anything else).
func (s *server) dispatch(cmd *command) (fileDone <-chan struct{}) {
	c := *cmd
	switch *c.Type {
	case CmdPrompt:
		s.startPrompt(&c)
	case CmdAbort:
		s.abortRuns()
		s.abortCompactions()
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
	case CmdExportHTML:
		return s.exportHTML(&c)
	// Prompting and the session (i15-rpc).
	case CmdNegotiateProtocol:
		s.negotiate(&c)
	case CmdSteer, CmdFollowUp:
		s.queueInput(&c)
	case CmdAbortAndPrompt:
		s.abortRuns()
		s.startPrompt(&c)
	case CmdSetSteeringMode, CmdSetFollowUpMode, CmdSetInterruptMode:
		s.setQueueMode(&c)
	case CmdGetMessagesPage:
		s.getMessagesPage(&c)
	case CmdGetLastAssistantText:
		s.getLastAssistantText(&c)
	case CmdGetSessionStats:
		s.getSessionStats(&c)
	case CmdSetSessionName:
		s.setSessionName(&c)
	case CmdSwitchSession:
		return s.switchSession(&c)
	case CmdGetAvailableCommands:
		s.ok(&c, map[string]any{"commands": availableCommands()})
	case CmdCompact:
		s.compact(&c)
	case CmdSetAutoCompaction:
		s.setAutoCompaction(&c)
	// models, thinking and retry (models.go)
	case CmdSetModel, CmdCycleModel, CmdGetAvailableModels, CmdSetThinkingLevel, CmdCycleThinkingLevel,
		CmdSetAutoRetry, CmdAbortRetry:
		s.modelCommand(&c)
	default:
		// The id lets the client fail the call at once instead of waiting.
		s.fail(&c, errors.New("Unknown command: "+*c.Type))
	}
	return nil
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

// Values of prompt's streamingBehavior.
const (
	behaviorSteer    = "steer"
	behaviorFollowUp = "followUp"
)

// startPrompt is prompt (and abort_and_prompt's prompt): a run on the
// message, or, while one runs and streamingBehavior says so, a steer or
// follow-up of it.
func (s *server) startPrompt(c *command) {
	if p, _ := s.currentModel(); p == nil {
		s.fail(c, ErrNoModel)
		return
	}
	if c.Message == nil || strings.TrimSpace(*c.Message) == "" {
		s.fail(c, fmt.Errorf(`%s needs a non-empty "message"`, *c.Type))
		return
	}
	behavior := ""
	if c.StreamingBehavior != nil && *c.Type == CmdPrompt {
		behavior = *c.StreamingBehavior
		if behavior != behaviorSteer && behavior != behaviorFollowUp {
			s.fail(c, fmt.Errorf(`streamingBehavior must be %q or %q, not %q`, behaviorSteer, behaviorFollowUp, behavior))
			return
		}
	}
	text := *c.Message
	s.mu.Lock()
	if s.prompt != nil {
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

// queueLocked queues text as a steer or a follow-up of the session's run.
func (s *server) queueLocked(c *command, steer bool, text string) {
	if steer {
		s.sess.Steer(text)
	} else {
		s.sess.FollowUp(text)
	}
	s.queuedBy = c
}

// queueInput is steer and follow_up: queued for the running prompt, or,
// when none runs, the start of a run on it (as the reference's queue drain
// does when idle).
func (s *server) queueInput(c *command) {
	if p, _ := s.currentModel(); p == nil {
		s.fail(c, ErrNoModel)
		return
	}
	if c.Message == nil || strings.TrimSpace(*c.Message) == "" {
		s.fail(c, fmt.Errorf(`%s needs a non-empty "message"`, *c.Type))
		return
	}
	s.mu.Lock()
	s.queueLocked(c, *c.Type == CmdSteer, *c.Message)
	var launch func()
	if s.prompt == nil {
		launch = s.runLocked(c, s.continueRun)
	}
	s.mu.Unlock()
	s.ok(c, nil)
	if launch != nil {
		launch()
	}
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
// a run that ended well is followed by one on it. Called with s.mu held.
func (s *server) runLocked(c *command, run func(ctx context.Context, sess *agent.AgentSession, emit func(agent.Event)) error) (launch func()) {
	if c == nil { // not expected: queued input always has its command
		typ := CmdPrompt
		c = &command{Type: &typ}
	}
	ctx, cancel := context.WithCancel(s.base)
	j := &job{cancel: cancel, done: make(chan struct{})}
	s.prompt = j
	sess := s.sess
	s.wg.Add(1)
	return func() {
		s.attachModels(sess)
		go func() {
			defer s.wg.Done()
			defer close(j.done)
			defer cancel()
			var next func()
			// The run is over for the client once agent_end is written: a
			// prompt sent after it must not find this one still running.
			end := func(failed bool) {
				s.mu.Lock()
				defer s.mu.Unlock()
				if s.prompt != j {
					return
				}
				s.prompt = nil
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
			if next != nil {
				next()
			}
		}()
	}
}

// abortRuns cancels the running prompt and waits for it, until none runs.
func (s *server) abortRuns() {
	for {
		js := s.cancelPrompt()
		if len(js) == 0 {
			return
		}
		s.waitJobs(js)
	}
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
		dir := sess.Cwd()
		run, err := sess.ExecuteBashRun(ctx, cmd, nil, agent.BashOptions{Sandbox: policy})
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

func (s *server) state() State {
	s.mu.Lock()
	sess, streaming, sbox := s.sess, s.prompt != nil, s.sbox
	s.mu.Unlock()
	st := State{
		Model:                 s.modelInfo(),
		ThinkingLevel:         s.thinkingLevel(),
		IsStreaming:           streaming,
		IsCompacting:          sess.IsCompacting(),
		SteeringMode:          sess.SteeringMode(),
		FollowUpMode:          sess.FollowUpMode(),
		InterruptMode:         sess.InterruptMode(),
		SessionID:             sess.ID(),
		SessionName:           sess.Name(),
		AutoCompactionEnabled: sess.AutoCompactionEnabled(),
		TodoPhases:            []any{},
		Sandbox:               sbox.state(),
		IsBashRunning:         sess.IsBashRunning(),
		MessageCount:          len(sess.Messages()),
		// Steers and follow-ups waiting, and bash results recorded while
		// the prompt streams (they join with the next one).
		QueuedMessageCount: sess.QueuedInputCount() + len(sess.QueuedMessages()),
	}
	if store := sess.Store(); store != nil {
		st.SessionFile = store.Path()
	}
	if st.ContextUsage = s.contextUsage(sess); st.ContextUsage != nil {
		var names []string
		if s.cfg.Tools != nil {
			names = s.cfg.Tools.Names()
		}
		st.SystemPrompt = []string{agent.SystemPrompt(sess.Cwd(), names)}
	}
	return st
}

// The model fields of get_state: the current model (Config.Models, else
// Config.Provider and Model) and its thinking level.

// modelInfo is the model prompts go to; nil without one.
func (s *server) modelInfo() *ModelInfo {
	if ms := s.cfg.Models; ms != nil {
		if m, ok := ms.CurrentModel(); ok {
			return &m
		}
		return nil
	}
	p := s.cfg.Provider
	if p == nil {
		return nil
	}
	m := &ModelInfo{ID: s.cfg.Model, Name: s.cfg.Model, API: agent.APIName(p), Provider: p.Name(), Input: []string{"text"}}
	if b, ok := p.(interface{ BaseURL() string }); ok {
		m.BaseURL = b.BaseURL()
	}
	return m
}

// thinkingLevel is the level the model is asked to think at; "" (no level,
// as the reference says for a model without reasoning) when no model is
// configured.
func (s *server) thinkingLevel() string {
	if ms := s.cfg.Models; ms != nil {
		return ms.ThinkingLevel()
	}
	if s.cfg.Provider == nil {
		return ""
	}
	return "off"
}

// contextUsage is how full sess's context is for the current model; nil
// without one.
func (s *server) contextUsage(sess *agent.AgentSession) *agent.ContextUsage {
	p, model := s.currentModel()
	if p == nil {
		return nil
	}
	u := sess.ContextUsage(model, s.cfg.Tools)
	return &u
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
	s.stopWork()
	sess, err := s.cfg.NewSession()
	if err != nil {
		s.fail(c, err)
		return
	}
	if c.ParentSession != nil && *c.ParentSession != "" {
		if store := sess.Store(); store != nil {
			store.SetParentSession(*c.ParentSession)
		}
	}
	s.adopt(sess)
	s.ok(c, map[string]bool{"cancelled": false})
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

package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/jobs"
	"agentsh/internal/sandbox"
	"agentsh/internal/session"
)

// ErrBashRunning refuses a bang command while another one runs; the text is
// shown to the user verbatim.
var ErrBashRunning = errors.New("A bash command is already running. Press Esc to cancel it first.") //lint:ignore ST1005 user-facing text from the reference

// SaveError is a failure to write a message to the session file (a full
// disk, an I/O error) after the message was recorded in memory and used:
// the caller still has its result.
type SaveError struct{ Err error }

func (e *SaveError) Error() string { return e.Err.Error() }
func (e *SaveError) Unwrap() error { return e.Err }

// BashRun is a bang command's result together with what the session noted
// about it.
type BashRun struct {
	bash.BashResult
	// ArtifactError says why the full output of a truncated run was not
	// saved (e.g. "no space left on device"); "" when it was, or when
	// nothing was cut.
	ArtifactError string `json:"artifactError,omitempty"`
	// SettingsError is why the settings files do not load now (a file
	// saved broken): the command ran with the last settings that did, or
	// the defaults; "" when they load.
	SettingsError string `json:"settingsError,omitempty"`
}

// BashOptions configures one ExecuteBash.
type BashOptions struct {
	// ExcludeFromContext marks a `!!` command: recorded and shown, never
	// sent to the model.
	ExcludeFromContext bool
	// BackgroundNow, when closed, makes the command a job (the user's
	// ctrl+b); nil = the session's (MoveToBackground). A caller that has
	// its own cannot lose a ctrl+b pressed before the command started.
	BackgroundNow <-chan struct{}
	// Terminal runs the command with its output on the session shell's
	// terminal (the TUI's `!` commands): full-screen and interactive
	// programs work, the shell stays the session's (see bash.TerminalView).
	Terminal *bash.TerminalView
	// Sandbox confines the command (an RPC client's choice, set_sandbox);
	// nil for the user's `!` commands, which are never confined.
	Sandbox *sandbox.Policy
	// Styled is for a UI that shows colours: onChunk receives the output
	// with its SGR sequences kept, the result's Styled is the coloured
	// output, and the recorded message keeps it; the model's text is plain.
	Styled bool
}

// AgentSession holds one conversation: its messages, its persistent store
// and the user's bang commands. It is safe for concurrent use.
type AgentSession struct {
	cwd       string
	id        string
	store     *session.Store           // nil = not persisted
	artifacts *session.ArtifactManager // nil = no artifact folder (spec §6)
	exec      *bash.Executor
	shell     bash.ShellConfig
	state     *bash.SessionState                  // cwd, exports, functions, aliases, options of every shell of the session
	live      atomic.Pointer[config.LiveSettings] // nil: shell and the callers' settings as given
	models    atomic.Pointer[Models]              // the model and thinking level of each call (SetModels); nil: Prompt's
	retry     atomic.Pointer[Retry]               // auto-retry of failed model calls (SetRetry); nil: none
	// reqTimeout is SetRequestTimeout's (0: DefaultRequestTimeout).
	reqTimeout atomic.Int64
	now        func() time.Time

	mu          sync.Mutex
	messages    []session.Message
	queued      []session.Message // bang results recorded while streaming
	streaming   bool
	bashRunning bool
	bashCancel  context.CancelFunc
	jobs        *jobs.Manager              // where the model's background commands run; nil = none
	jobsTold    map[*jobs.Job]bool         // ended jobs the model was told about (or that ended before SetJobs)
	bgNow       chan struct{}              // closed by MoveToBackground; the running calls hold it
	sandbox     config.SandboxSettings     // the model's sandbox (SetSandbox); zero = none
	sbPolicy    *policyOnce                // the policy made of sandbox; nil = not made yet
	q           msgQueues                  // steering and follow-up messages (steer.go)
	name        string                     // the name of a session without a store (name.go)
	compacting  bool                       // a compaction runs (compact.go)
	autoCompact *bool                      // set_auto_compaction's choice; nil = the settings'
	localIDs    map[session.Message]string // entry ids of messages without a store (compact.go)
}

// New returns a session for cwd. With a store, the id, the messages already
// in the file and the artifact folder come from it and every message is
// persisted; without one (nil) the session lives in memory under a fresh id
// and truncated output gets no artifact. A nil exec means bash.Default().
// shell is the bang commands' shell; its ScrubEnv is ignored, because the
// user's own commands keep agentsh's whole environment.
func New(cwd string, store *session.Store, exec *bash.Executor, shell bash.ShellConfig) (*AgentSession, error) {
	if exec == nil {
		exec = bash.Default()
	}
	shell.ScrubEnv, shell.Sandbox = nil, nil
	a := &AgentSession{cwd: cwd, store: store, exec: exec, shell: shell, now: time.Now, state: bash.NewSessionState(cwd)}
	if store != nil {
		a.id = store.ID()
		a.messages = store.LoadedContext() // after a compaction: its summary and what it kept
		a.artifacts = session.NewArtifactManager(store.ArtifactsDir())
	} else {
		id, err := session.NewID()
		if err != nil {
			return nil, err
		}
		a.id = id
	}
	return a, nil
}

// SetArtifactsDir gives a session without a store an artifact folder, so
// that its truncated output still has an artifact:// link (--no-session
// keeps one in a temporary folder for the life of the process). Call it
// before the session runs anything; the caller removes the folder.
func (a *AgentSession) SetArtifactsDir(dir string) {
	a.artifacts = session.NewArtifactManager(dir)
	a.mu.Lock()
	a.sbPolicy = nil // the policy gives the artifacts back to read
	a.mu.Unlock()
}

// FollowSettings makes the session read its settings from l on every
// command instead of using what it was given: bang commands take the shell
// config, and ToolContext the bash tool's settings, from the files as they
// are at that moment (spec §2.2), so an edit of settings.json applies from
// the next command.
func (a *AgentSession) FollowSettings(l *config.LiveSettings) { a.live.Store(l) }

// ID returns the session id (also the bang commands' shell session key).
func (a *AgentSession) ID() string { return a.id }

// Cwd returns the session's working directory: where it started, moved by
// the user's `!cd` (spec §2.1, session state).
func (a *AgentSession) Cwd() string { return a.state.Cwd() }

// StartDir returns the directory the session was started in (its store's
// folder is named after it).
func (a *AgentSession) StartDir() string { return a.cwd }

// ShellState is the session's shell state, shared by all of its shells.
func (a *AgentSession) ShellState() *bash.SessionState { return a.state }

// Store returns the session's store, nil when not persisted.
func (a *AgentSession) Store() *session.Store { return a.store }

// Artifacts returns the session's artifact manager, nil without a store
// (unless SetArtifactsDir gave it one).
func (a *AgentSession) Artifacts() *session.ArtifactManager { return a.artifacts }

// Messages returns a copy of the conversation as recorded (queued bang
// results not included; see QueuedMessages). After a compaction it starts
// with the summary (*CompactionSummaryMessage) followed by the kept
// messages, as the reference's get_messages does; the session file keeps
// the whole history.
func (a *AgentSession) Messages() []session.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]session.Message(nil), a.messages...)
}

// QueuedMessages returns the bang results waiting for FlushQueued.
func (a *AgentSession) QueuedMessages() []session.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]session.Message(nil), a.queued...)
}

// Append records m in the conversation and the session file. On a store
// error the message is still kept in memory and the error is returned.
func (a *AgentSession) Append(m session.Message) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.appendLocked(m)
}

func (a *AgentSession) appendLocked(m session.Message) error {
	a.messages = append(a.messages, m)
	if a.store != nil {
		return a.store.Append(m)
	}
	return nil
}

// SetStreaming tells the session whether the agent is mid-turn. While it is,
// bang results are queued instead of appended, so they can never land
// between a tool call and its result.
func (a *AgentSession) SetStreaming(on bool) {
	a.mu.Lock()
	a.streaming = on
	a.mu.Unlock()
}

// FlushQueued appends the queued bang results in the order they finished;
// the agent loop calls it when the next prompt is sent. All are appended in
// memory even if persisting one fails; the first error is returned.
func (a *AgentSession) FlushQueued() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	var first error
	for _, m := range a.queued {
		if err := a.appendLocked(m); err != nil && first == nil {
			first = err
		}
	}
	a.queued = nil
	return first
}

// ContextMessages is the conversation as the model sees it: `!!` results are
// left out, bang results become user messages (BashExecutionToText) and so
// does a compaction's summary.
func (a *AgentSession) ContextMessages() []session.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := make([]session.Message, 0, len(a.messages))
	for _, m := range a.messages {
		if b, ok := m.(*session.BashExecutionMessage); ok {
			if b.ExcludeFromContext {
				continue
			}
			out = append(out, &session.UserMessage{Text: session.BashExecutionToText(b), Timestamp: b.Timestamp})
			continue
		}
		if c, ok := m.(*session.CompactionSummaryMessage); ok {
			out = append(out, &session.UserMessage{Text: summaryContextText(c.Summary), Timestamp: c.Timestamp})
			continue
		}
		out = append(out, m)
	}
	return out
}

// IsBashRunning reports whether a bang command is running.
func (a *AgentSession) IsBashRunning() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.bashRunning
}

// AbortBash cancels the running bang command, if any; its ExecuteBash then
// returns a Cancelled result.
func (a *AgentSession) AbortBash() {
	a.mu.Lock()
	cancel := a.bashCancel
	a.mu.Unlock()
	if cancel != nil {
		cancel()
	}
}

// BackgroundNow is closed by the next MoveToBackground: a running call that
// holds it becomes a job then.
func (a *AgentSession) BackgroundNow() <-chan struct{} {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bgNow == nil {
		a.bgNow = make(chan struct{})
	}
	return a.bgNow
}

// MoveToBackground makes the running `!` command and the model's running
// bash calls jobs of the session's manager (the user's ctrl+b); each call
// then returns with the output so far. Calls started later are not affected.
func (a *AgentSession) MoveToBackground() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.bgNow != nil {
		close(a.bgNow)
		a.bgNow = nil
	}
}

// ExecuteBash runs a user bang command on the session's own shell (session
// key = session id, no cwd, so `cd` and exports carry over to the next one),
// streaming sanitized output to onChunk (may be nil), and records a
// bashExecution message: appended and persisted at once, or queued while the
// agent streams. Timeout and cancel are results, not errors. Only one runs at
// a time: a concurrent call gets ErrBashRunning.
//
// An error from the executor means nothing was recorded. If only persisting
// fails, the result is returned together with a *SaveError.
func (a *AgentSession) ExecuteBash(ctx context.Context, command string, onChunk func([]byte), opts BashOptions) (bash.BashResult, error) {
	run, err := a.ExecuteBashRun(ctx, command, onChunk, opts)
	return run.BashResult, err
}

// bangShell is the shell of a bang command and the artifact cap: the
// settings' as they are now, agentsh's whole environment, and no sandbox
// unless opts asks (the user's own commands are never confined). When the
// files do not load (settingsErr), the last settings that did serve, or
// the session's defaults: a broken file must not stop the `!vim` that
// would fix it.
func (a *AgentSession) bangShell(opts BashOptions) (shell bash.ShellConfig, artMax int, settingsErr error) {
	shell = a.shell
	if l := a.live.Load(); l != nil {
		var ts bash.ToolSettings
		ts, settingsErr = l.ToolSettings()
		if ts.Shell.Path != "" {
			shell, artMax = ts.Shell, ts.ArtifactMaxBytes
		}
		shell.ScrubEnv = nil // the user's own commands keep the whole environment
	}
	// On a terminal the user watches, pagers and editors are the user's.
	shell.Attended = opts.Terminal != nil
	shell.Sandbox = opts.Sandbox
	return shell, artMax, settingsErr
}

// ExecuteBashRun is ExecuteBash with the session's notes on the result.
func (a *AgentSession) ExecuteBashRun(ctx context.Context, command string, onChunk func([]byte), opts BashOptions) (BashRun, error) {
	if strings.TrimSpace(command) == "" {
		return BashRun{}, errors.New("Command must not be empty") //lint:ignore ST1005 user-facing text
	}
	shell, artMax, settingsErr := a.bangShell(opts)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.mu.Lock()
	if a.bashRunning {
		a.mu.Unlock()
		return BashRun{}, ErrBashRunning
	}
	a.bashRunning, a.bashCancel = true, cancel
	a.mu.Unlock()
	defer func() {
		a.mu.Lock()
		a.bashRunning, a.bashCancel = false, nil
		a.mu.Unlock()
	}()

	var artID, artPath string
	var allocErr error
	if a.artifacts != nil {
		if id, p, err := a.artifacts.Allocate("bash"); err == nil {
			artID, artPath = id, p
		} else {
			allocErr = err
		}
	}
	// A command that waits for input, or that the user moves to the
	// background (ctrl+b), becomes a job of the session's manager (spec §9).
	bgNow := opts.BackgroundNow
	if bgNow == nil {
		bgNow = a.BackgroundNow()
	}
	ro := bash.RunOptions{
		Shell: shell, SessionKey: a.id, Timeout: bash.DefaultTimeout,
		State: a.state, Capture: bash.CaptureAll,
		ArtifactPath: artPath, ArtifactID: artID, ArtifactMaxBytes: artMax, OnChunk: onChunk,
		Jobs: a.Jobs(), BackgroundNow: bgNow, Terminal: opts.Terminal,
	}
	if opts.Styled {
		ro.OnChunk, ro.OnStyledChunk = nil, onChunk
		if onChunk == nil {
			ro.OnStyledChunk = func([]byte) {}
		}
	}
	// The user's own command runs outside the sandbox: what the model
	// planted for the user's git is removed first, and said.
	var disarmed string
	if shell.Sandbox == nil {
		disarmed = sandbox.DisarmedNote(a.SandboxPolicy().DisarmGit())
	}
	res, err := a.exec.Run(ctx, command, ro)
	if disarmed != "" {
		res.Output = disarmed + "\n" + res.Output
	}
	if res.Job != nil {
		if artID != "" {
			bash.ReleaseWhenJobEnds(res.Job, artID, a.artifacts)
		}
		res.Output = strings.TrimRight(res.Output, "\n")
		if res.Output != "" {
			res.Output += "\n\n"
		}
		res.Output += "[" + bash.DetachSentence(res.JobReason, res.Job.ID(), 0) + "]"
	} else if artID != "" && res.ArtifactID == "" {
		a.artifacts.Release(artID)
	}
	meta := bash.ResultMeta(res)
	bash.NoteArtifactFailure(meta, allocErr, artPath)
	run := BashRun{BashResult: res}
	if settingsErr != nil {
		run.SettingsError = settingsErr.Error()
	}
	if meta != nil && meta.Truncation != nil {
		run.ArtifactError = meta.Truncation.ArtifactError
	}
	if err != nil {
		return run, err
	}
	msg := &session.BashExecutionMessage{
		Command: command, Output: res.Output, ExitCode: res.ExitCode,
		Cancelled: res.Cancelled, Truncated: res.Truncated, Meta: meta,
		Timestamp: a.now().UnixMilli(), ExcludeFromContext: opts.ExcludeFromContext, Styled: res.Styled,
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.streaming {
		a.queued = append(a.queued, msg)
		return run, nil
	}
	if err := a.appendLocked(msg); err != nil {
		return run, &SaveError{Err: fmt.Errorf("record bash command: %w", err)}
	}
	return run, nil
}

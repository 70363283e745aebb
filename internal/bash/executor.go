package bash

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"syscall"
	"time"

	"agentsh/internal/guard"
	"agentsh/internal/jobs"
	"agentsh/internal/pty"
	"agentsh/internal/sandbox"
	"agentsh/internal/sink"
)

// DefaultTimeout applies when a caller passes no timeout.
const DefaultTimeout = 300 * time.Second

// DefaultKillGrace is how long processes get between SIGTERM and SIGKILL.
const DefaultKillGrace = 400 * time.Millisecond

// maxIdlePerKey bounds the idle shells kept for one cache key; extra shells
// from bursts of parallel calls are closed (with their background jobs)
// when they come back, so it is generous.
const maxIdlePerKey = 8

// RunOptions configures one Executor.Run.
type RunOptions struct {
	Shell        ShellConfig
	SessionKey   string        // bang commands pass the agent session id; tool calls pass ""
	Cwd          string        // "" keeps the session's current directory
	Timeout      time.Duration // 0 = DefaultTimeout; floor 1s
	ArtifactPath string        // spill file for the full output, "" = none
	ArtifactID   string
	// ArtifactMaxBytes caps the artifact (settings artifacts.maxBytes);
	// <= 0 means sink.DefaultArtifactMaxBytes.
	ArtifactMaxBytes int
	OnChunk          func([]byte) // sanitized output as it arrives; the slice is only valid during the call
	// OnStyledChunk, for a UI that shows colours, receives the output as it
	// arrives with its SGR sequences kept, and BashResult.Styled is set
	// (sink.Options.OnStyledChunk); nil costs the plain path nothing.
	OnStyledChunk func([]byte)
	// StopAfterLines > 0 stops reading after that many lines, as the
	// `| head -n N` stripped by NormalizeCommand would have: once the
	// final pipeline runs (headStop).
	StopAfterLines int
	// StopMarkNonce, with StopAfterLines, is the nonce of the mark the
	// command prints where its final pipeline starts (normalizeMarked):
	// the output before it is never closed. "" = the whole command is
	// that pipeline.
	StopMarkNonce string
	// State is the session's shell state (cwd, exports, functions, aliases,
	// options): applied to the shell before the run when it is behind.
	State *SessionState
	// View is which of State's layers the shell gets, and which one
	// Capture records into: UserView (the zero value) for the user's own
	// commands and every shell outside the sandbox, ModelView for the
	// model's shells only.
	View StateView
	// Capture records the state after the run (when the command may have
	// changed it).
	Capture CaptureMode
	// Fresh runs the command on a shell started for it and closed after
	// it, never on a cached one: what earlier commands left in a shell
	// (non-exported variables, traps, hashed paths) cannot reach it.
	Fresh bool
	// CaptureHeadLines > 0 keeps the first that many lines of sanitized
	// output (at most sink.DefaultMaxBytes) in BashResult.Head, because the
	// in-memory tail loses them once the output overflows.
	CaptureHeadLines int
	// Jobs, when set, lets the command become a job of it (spec §9)
	// instead of holding the call: after AutoBackground (0 = never), when
	// it waits for input on its terminal (Shell.TerminalStdin), or when
	// BackgroundNow is closed (the user's ctrl+b). Run then returns at once
	// with the output so far and BashResult.Job; the job takes the rest.
	// A full manager keeps the command in the foreground.
	Jobs           *jobs.Manager
	AutoBackground time.Duration
	BackgroundNow  <-chan struct{}
	// KeepTimeout keeps Timeout in force once the command is a job (the
	// model asked for it); otherwise a job has no timeout.
	KeepTimeout bool
	// JobCommand is what the job lists as its command; "" = the command.
	JobCommand string
	// Terminal runs the command with its output on the shell's terminal
	// (needs Shell.TerminalStdin and Jobs): see TerminalView. A program
	// that used the alternate screen reports its last full screen as its
	// output (the artifact keeps the stream).
	Terminal *TerminalView
}

// BashResult is the structured outcome of a run; timeouts and cancels are
// results, not errors.
type BashResult struct {
	Output      string `json:"output"`
	ExitCode    *int   `json:"exitCode,omitempty"`
	Cancelled   bool   `json:"cancelled"`
	Truncated   bool   `json:"truncated"`
	TotalLines  int    `json:"totalLines"`
	TotalBytes  int    `json:"totalBytes"`
	OutputLines int    `json:"outputLines"`
	OutputBytes int    `json:"outputBytes"`
	ArtifactID  string `json:"artifactId,omitempty"`
	// ArtifactDroppedBytes is how much of the output the capped artifact
	// left out between its head and its tail (0 = it holds everything).
	ArtifactDroppedBytes int `json:"artifactDroppedBytes,omitempty"`
	// ArtifactHeadLines is how many lines the artifact's head holds when
	// bytes were dropped: its line numbers match the output's up to there.
	ArtifactHeadLines int    `json:"-"`
	Head              string `json:"-"` // first CaptureHeadLines lines, when asked for
	// Job is set when the command became a job instead of ending (see
	// RunOptions.Jobs): Output is what it printed until then.
	Job       *jobs.Job    `json:"-"`
	JobReason DetachReason `json:"-"`
	// Styled is Output with the SGR sequences of the command's output
	// kept (sink.Summary.Styled), when RunOptions.OnStyledChunk asked for
	// it and there were any; for the UI, never for the model.
	Styled string `json:"-"`
	// Stopped: StopAfterLines closed the output and output past the limit
	// was left unread (read and dropped, or its writer died of the
	// SIGPIPE): the totals count only what was read.
	Stopped bool `json:"stopped,omitempty"`
}

// Executor runs commands on cached persistent shells.
type Executor struct {
	// KillGrace overrides DefaultKillGrace when positive.
	KillGrace time.Duration

	mu       sync.Mutex
	idle     map[string][]*shellSession
	all      map[*shellSession]struct{}
	starting map[string]*prestart // shells Prestart is starting, by cache key
	// preparing counts the Prestarts still taking the rc snapshot, whose
	// key is not known yet; cond tells when one names it.
	preparing int
	cond      *sync.Cond
	closed    bool
	// prestarts counts the Prestart goroutines: Close waits for them, so
	// no shell of one outlives the executor.
	prestarts sync.WaitGroup
}

// prestart is a shell Prestart is starting; a run that finds it waits for
// it instead of starting a second one (claimed), and takes it.
type prestart struct {
	done    chan struct{}
	claimed bool
	s       *shellSession // set once done; nil: the start failed or the executor closed
}

// NewExecutor returns an executor with its own session cache.
func NewExecutor() *Executor {
	e := &Executor{idle: map[string][]*shellSession{}, all: map[*shellSession]struct{}{},
		starting: map[string]*prestart{}}
	e.cond = sync.NewCond(&e.mu)
	return e
}

var defaultExecutor = NewExecutor()

// Default is the process-wide executor whose cache lives as long as agentsh.
func Default() *Executor { return defaultExecutor }

// CloseAll closes the process-wide executor's shells and removes snapshots
// and this process's engine folder; call it once on program exit.
func CloseAll() {
	defaultExecutor.Close()
	snapshotStops.Wait()
	RemoveSnapshots()
	guard.RemoveEngineDir()
}

func (e *Executor) grace() time.Duration {
	if e.KillGrace > 0 {
		return e.KillGrace
	}
	return DefaultKillGrace
}

// acquire hands out an idle shell for the key or starts a new one (always
// a new one when fresh): a busy shell is never shared and callers never
// queue behind each other. A shell Prestart is starting for the key is
// waited for and taken instead of starting a second one.
func (e *Executor) acquire(cfg ShellConfig, sessionKey, cwd string, fresh bool) (*shellSession, error) {
	key := cfg.cacheKey(sessionKey)
	e.mu.Lock()
	var stale []*shellSession
	var got *shellSession
	var wait *prestart
	for {
		if e.closed {
			e.mu.Unlock()
			for _, s := range stale {
				go s.close()
			}
			return nil, errors.New("start shell: executor is closed")
		}
		for list := e.idle[key]; len(list) > 0 && !fresh; {
			s := list[len(list)-1] // most recently used keeps state like a single shell would
			list = list[:len(list)-1]
			e.idle[key] = list
			if s.alive() {
				got = s
				break
			}
			delete(e.all, s)
			stale = append(stale, s)
		}
		if got != nil || fresh {
			break
		}
		if p := e.starting[key]; p != nil && !p.claimed {
			// The shell Prestart is starting for this key is ours:
			// the rest of its start beats a whole start of our own.
			p.claimed, wait = true, p
			break
		}
		if e.preparing == 0 {
			break
		}
		// A Prestart is still taking the rc snapshot this run waited
		// for too: it names its key in a moment.
		e.cond.Wait()
	}
	e.mu.Unlock()
	for _, s := range stale {
		go s.close()
	}
	if got != nil {
		return got, nil
	}
	if wait != nil {
		<-wait.done
		if wait.s != nil {
			return wait.s, nil
		}
		// Its start failed (or the executor closed): ours says why.
	}
	s, err := startSession(cfg, key, cwd, e.grace())
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		s.close()
		return nil, errors.New("start shell: executor is closed")
	}
	e.all[s] = struct{}{}
	e.mu.Unlock()
	return s, nil
}

// release returns a healthy shell to the idle list; a dead, cancelled or
// poisoned one, or one started fresh, is evicted and closed with all its
// processes.
func (e *Executor) release(s *shellSession, fresh bool) {
	e.mu.Lock()
	if !e.closed && !fresh && s.alive() && len(e.idle[s.key]) < maxIdlePerKey {
		e.idle[s.key] = append(e.idle[s.key], s)
		e.mu.Unlock()
		return
	}
	delete(e.all, s)
	e.mu.Unlock()
	s.close()
}

// Prestart starts, in the background, the shell a Run with opts would
// start (the same ShellConfig, rc snapshot and session key), and leaves it
// idle for that Run: a model's first bash call then finds its shell ready
// instead of waiting for the guardian, the sandbox's view and bash. It
// starts none when an idle shell or another Prestart already serves the
// key, or for a Fresh run. A run that comes while the start is under way
// waits for it rather than starting a second shell. Close waits for a
// start under way and closes what it started.
func (e *Executor) Prestart(opts RunOptions) {
	if opts.Fresh {
		return
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return
	}
	e.prestarts.Add(1)
	e.preparing++
	e.mu.Unlock()
	go func() {
		defer e.prestarts.Done()
		if opts.Shell.Sandbox.Enabled() {
			// The kernel's features are probed once (a process in new
			// namespaces): beside the rc snapshot, not after it.
			var probe sync.WaitGroup
			probe.Go(func() { sandbox.Detect() })
			defer probe.Wait()
		}
		err := opts.prepareShell()
		key := opts.Shell.cacheKey(opts.SessionKey)
		e.mu.Lock()
		e.preparing--
		e.cond.Broadcast()
		serve := err == nil && !e.closed && e.starting[key] == nil
		for _, s := range e.idle[key] {
			if s.alive() {
				serve = false
			}
		}
		if !serve {
			e.mu.Unlock()
			return
		}
		p := &prestart{done: make(chan struct{})}
		e.starting[key] = p
		e.mu.Unlock()
		s, err := startSession(opts.Shell, key, opts.Cwd, e.grace())
		e.mu.Lock()
		delete(e.starting, key)
		late := err == nil && e.closed
		switch {
		case err != nil || late:
		case p.claimed:
			e.all[s], p.s = struct{}{}, s
		default:
			e.all[s] = struct{}{}
			e.idle[key] = append(e.idle[key], s)
		}
		close(p.done)
		e.mu.Unlock()
		if late {
			s.close()
		}
	}()
}

// prepareShell completes opts.Shell as Run does before it picks a shell:
// the shell's path, the rc snapshot when it is taken lazily, and no
// terminal as stdin without a job manager.
func (opts *RunOptions) prepareShell() error {
	if opts.Shell.Path == "" {
		p, err := ResolveShell("")
		if err != nil {
			return fmt.Errorf("start shell: %w", err)
		}
		opts.Shell.Path = p
	}
	if opts.Shell.LazySnapshot && opts.Shell.SnapshotPath == "" {
		opts.Shell.SnapshotPath = GetOrCreateSnapshot(opts.Shell.Path, opts.Shell.Env)
	}
	if opts.View == ModelView && opts.Shell.SnapshotPath != "" {
		// The model's shells source the snapshot without the rc's
		// tool-named definitions; a prestarted shell must be the same.
		opts.Shell.SnapshotPath = ModelSnapshot(opts.Shell.SnapshotPath)
	}
	if opts.Jobs == nil {
		// A terminal nobody can type into would hold a reading command
		// to its timeout; /dev/null ends it at once.
		opts.Shell.TerminalStdin = false
	}
	return nil
}

// Close closes every shell of this executor, after the starts Prestart
// has under way; later runs fail.
func (e *Executor) Close() {
	e.mu.Lock()
	e.closed = true
	e.cond.Broadcast()
	e.mu.Unlock()
	// Each sees closed and closes what it started.
	e.prestarts.Wait()
	e.mu.Lock()
	all := make([]*shellSession, 0, len(e.all))
	for s := range e.all {
		all = append(all, s)
	}
	e.all = map[*shellSession]struct{}{}
	e.idle = map[string][]*shellSession{}
	e.mu.Unlock()
	var wg sync.WaitGroup
	for _, s := range all {
		wg.Add(1)
		go func() { defer wg.Done(); s.close() }()
	}
	wg.Wait()
}

// Run executes command on a persistent shell for opts' config and key,
// streaming sanitized output to the sink and opts.OnChunk. Timeout and
// cancellation are reported in the result; an error means the shell itself
// could not be started or used.
func (e *Executor) Run(ctx context.Context, command string, opts RunOptions) (BashResult, error) {
	timeout := opts.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if timeout < time.Second {
		timeout = time.Second
	}
	if err := opts.prepareShell(); err != nil {
		return BashResult{}, err
	}
	if opts.Shell.Prefix != "" {
		command = opts.Shell.Prefix + " " + command
	}
	if opts.Capture != CaptureNone && opts.View == UserView && opts.State != nil && !opts.State.userMayChange(command) {
		// A user's command that cannot change the state skips the dump,
		// as a model's does (tool.go): `git status` through an RPC
		// client's bash paid ~250 writes of bash's for nothing.
		opts.Capture = CaptureNone
	}
	onChunk := opts.OnChunk
	var head *headCapture
	if opts.CaptureHeadLines > 0 {
		head = &headCapture{lines: opts.CaptureHeadLines, next: onChunk}
		onChunk = head.write
	}
	out := sink.New(sink.Options{ArtifactPath: opts.ArtifactPath, ArtifactID: opts.ArtifactID,
		ArtifactMaxBytes: opts.ArtifactMaxBytes, OnChunk: onChunk, OnStyledChunk: opts.OnStyledChunk})
	if ctx.Err() != nil {
		return summaryResult(out.Dump("Command cancelled"), nil, true), nil
	}
	deadline := time.Now().Add(timeout)
	var det *detachSpec
	var handed struct {
		d   *Detached
		job *jobs.Job
		sum sink.Summary
	}
	if opts.Jobs != nil {
		jobCommand := opts.JobCommand
		if jobCommand == "" {
			jobCommand = command
		}
		det = &detachSpec{after: opts.AutoBackground, onInput: opts.Shell.TerminalStdin, now: opts.BackgroundNow,
			adopt: func(r *liveRun, why DetachReason) bool {
				place, err := opts.Jobs.Reserve()
				if err != nil {
					return false
				}
				d := newDetached(r.s)
				sum := d.handover(out)
				handed.d, handed.sum = d, sum
				handed.job = place.Adopt(d, jobs.AdoptSpec{Command: jobCommand, ArtifactID: opts.ArtifactID,
					Started: r.started, OutputBytes: sum.TotalBytes, Waiting: why == DetachInput,
					LastOutput: time.Unix(0, r.s.lastOut.Load())})
				return true
			}}
	}
	var res runOutcome
	var stop *headStop
	for attempt := 0; ; attempt++ {
		s, err := e.acquire(opts.Shell, opts.SessionKey, opts.Cwd, opts.Fresh)
		if err != nil {
			out.Dump("")
			return BashResult{}, err
		}
		left := time.Until(deadline)
		if left <= 0 { // a retry after a stalled shell used up the budget
			e.release(s, opts.Fresh)
			res = runOutcome{timedOut: true}
			break
		}
		var mark []byte
		if opts.StopMarkNonce != "" {
			mark = finalMark(opts.StopMarkNonce)
		}
		stop = newHeadStop(opts.StopAfterLines, mark)
		res = s.run(ctx, runSpec{cwd: opts.Cwd, command: command, timeout: left, stop: stop,
			state: opts.State, view: opts.View, capture: opts.Capture, scrub: opts.Shell.scrub(), cfgEnv: opts.Shell.Env, detach: det,
			terminal: opts.Terminal}, out)
		if r := res.detached; r != nil {
			// A job now: its shell leaves the pool (closed when it ends).
			s.broken.Store(true)
			if !opts.KeepTimeout && r.timer != nil {
				r.timer.Stop()
				r.timer, r.timeoutC = nil, nil
			}
			handed.d.follow(e, r, out, timeout)
			br := summaryResult(handed.sum, nil, false)
			br.Job, br.JobReason = handed.job, res.detachReason
			if head != nil {
				br.Head = string(head.buf)
			}
			return br, nil
		}
		e.release(s, opts.Fresh)
		if res.retry && attempt == 0 {
			continue
		}
		break
	}
	switch {
	case res.timedOut:
		secs := int(math.Round(timeout.Seconds()))
		notice := fmt.Sprintf("Command timed out after %d seconds", secs)
		return fullScreen(summaryResult(out.Dump(notice), nil, true), opts.Terminal, notice), nil
	case res.cancelled:
		return fullScreen(summaryResult(out.Dump("Command cancelled"), nil, true), opts.Terminal, "Command cancelled"), nil
	case res.err != nil:
		out.Dump("")
		return BashResult{}, fmt.Errorf("run command: %w", res.err)
	}
	stopped := res.cut && stop.dropped.Load()
	if res.cut && res.exitCode != nil && *res.exitCode == 128+int(syscall.SIGPIPE) {
		// The producer died of the SIGPIPE that ended the pipeline; the
		// pipeline itself would have exited with head's status.
		zero := 0
		res.exitCode = &zero
		stopped = true
	}
	notice := ""
	switch {
	case res.reset:
		notice = ResetNotice
	case res.lingering:
		notice = LingerNotice
	}
	r := summaryResult(out.Dump(notice), res.exitCode, false)
	r.Stopped = stopped
	if head != nil {
		r.Head = string(head.buf)
	}
	return fullScreen(r, opts.Terminal, notice), nil
}

// fullScreen gives a program that used the alternate screen (vim, less,
// top) its last full screen as output (pty.FullScreenOutput).
func fullScreen(r BashResult, v *TerminalView, notice string) BashResult {
	if v == nil {
		return r
	}
	v.settle()
	if out, ok := pty.FullScreenOutput(v.Screen(), notice); ok {
		r.Output = out
		r.OutputLines, r.OutputBytes = strings.Count(out, "\n"), len(out)
	}
	return r
}

// headCapture keeps the first lines of the sanitized stream, each in its
// final state.
type headCapture struct {
	lines int
	buf   []byte
	next  func([]byte)
}

func (h *headCapture) write(b []byte) {
	if h.lines > 0 && len(h.buf) < sink.DefaultMaxBytes {
		take := b
		for end, n := 0, 0; ; n++ {
			i := bytes.IndexByte(b[end:], '\n')
			if i < 0 {
				break
			}
			end += i + 1
			if n+1 == h.lines {
				take = b[:end]
				break
			}
		}
		h.lines -= bytes.Count(take, []byte{'\n'})
		// Each line in its final state: the frames of a progress bar
		// would fill the 50 KB with one line.
		h.buf = sink.AppendFinal(h.buf, take)
		h.buf = h.buf[:min(len(h.buf), sink.DefaultMaxBytes)]
	}
	if h.next != nil {
		h.next(b)
	}
}

func summaryResult(s sink.Summary, code *int, cancelled bool) BashResult {
	return BashResult{
		Output: s.Output, ExitCode: code, Cancelled: cancelled, Truncated: s.Truncated,
		TotalLines: s.TotalLines, TotalBytes: s.TotalBytes,
		OutputLines: s.OutputLines, OutputBytes: s.OutputBytes, ArtifactID: s.ArtifactID,
		ArtifactDroppedBytes: s.DroppedBytes, ArtifactHeadLines: s.HeadLines, Styled: s.Styled,
	}
}

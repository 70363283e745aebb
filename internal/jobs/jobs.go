// Package jobs runs long-running and interactive commands as jobs of an
// agent session (spec §9): each on a pseudo-terminal below a guardian, so a
// prompt waits instead of reading EOF and nothing outlives the session. A
// Manager holds a session's jobs (at most DefaultMaxJobs at once); a job's
// output is read piece by piece, its terminal is fed text, the kernel tells
// when it waits for input, and a UI can attach to its screen (attach.go).
// A foreground run of the engine that became a job comes in as a Runner.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"agentsh/internal/proc"
	"agentsh/internal/pty"
	"agentsh/internal/sandbox"
	"agentsh/internal/sink"
)

// DefaultMaxJobs is how many jobs may run at once in one session.
const DefaultMaxJobs = 16

// Default terminal size of a job.
const (
	DefaultCols = 120
	DefaultRows = 40
)

// QuietForInput is how long a job blocked reading its terminal must have
// printed nothing before it counts as waiting for input: a program that
// reads between bursts of output is still working.
const QuietForInput = time.Second

// pollEvery is how often a quiet job's processes are looked at.
const pollEvery = 100 * time.Millisecond

// ErrClosed is returned by Start once the manager is closed.
var ErrClosed = errors.New("the job manager is closed")

// TooManyError refuses a start while MaxJobs jobs run. Its text is a
// sentence the model reads as is.
type TooManyError struct{ Running int }

func (e *TooManyError) Error() string {
	return fmt.Sprintf("Too many jobs (%d running): kill one with job_kill first.", e.Running)
}

// Kind is the phase of a job's life.
type Kind int

// The kinds of state a job can be in.
const (
	Running Kind = iota
	WaitingForInput
	Exited   // ended by itself with an exit code
	Killed   // ended by Kill or Manager.Close
	TimedOut // ended because its timeout passed
	Failed   // the terminal could not be set up or read; no exit code
)

// State is a job's state; String gives the words the tools show.
type State struct {
	Kind Kind
	Code int // the exit code, for Exited
}

// String is "running", "waiting for input", "exited N", "killed",
// "timed out" or "failed".
func (s State) String() string {
	switch s.Kind {
	case Running:
		return "running"
	case WaitingForInput:
		return "waiting for input"
	case Exited:
		return "exited " + strconv.Itoa(s.Code)
	case Killed:
		return "killed"
	case TimedOut:
		return "timed out"
	default:
		return "failed"
	}
}

// Ended reports whether the job is over.
func (s State) Ended() bool { return s.Kind >= Exited }

// Spec describes a job to start.
type Spec struct {
	Command string // run as `<Shell> -c <Command>` unless Args says how
	Shell   string // shell binary; "" = /bin/sh
	// Args and Own are pty.Options': the shell's own arguments that run
	// Command (nil = `-c Command`) and the folders that are the job's own.
	Args         []string
	Own          []string
	Cwd          string   // working directory; "" = the current one
	Env          []string // full environment; nil = the hardened inherited one
	Cols, Rows   int      // terminal size; 0 = 120×40
	ArtifactPath string   // file for the complete output; "" = none
	ArtifactID   string   // reported once the file holds the output
	// ArtifactMaxBytes caps the file (artifacts.maxBytes); <= 0 = the default.
	ArtifactMaxBytes int
	Timeout          time.Duration // 0 = none; when it passes the job is killed
	// Sandbox confines the job's processes; nil = none.
	Sandbox *sandbox.Policy
}

// Output is a piece of a job's output: the text since the previous read,
// bounded like any output (the last 50 KB, on character boundaries).
type Output struct {
	Text       string
	Bytes      int    // bytes of output since the previous read; > len(Text) when truncated
	Truncated  bool   // Text is only the tail of the new output
	TotalBytes int    // bytes of the job's whole output so far
	ArtifactID string // the artifact holding the whole output, when there is one
}

// Runner is what a job runs on: a program on a terminal of its own (a
// *pty.Session) or a foreground command of the engine that became a job
// (Adopt). Wait's result is final once Done is closed; Kill ends the whole
// process tree as a timeout does.
type Runner interface {
	Done() <-chan struct{}
	Wait() pty.Result
	Write(p []byte) (int, error) // raw bytes to the job's terminal
	Kill()
	TTY() string         // the terminal's path ("" = none)
	Pid() int            // the root of the job's processes
	ForegroundPgrp() int // the terminal's foreground process group (0 = unknown)
	Screen() *pty.Screen
	Resize(cols, rows int)
}

// Adoptee is a Runner that started before its job existed: it replays the
// output it held since the hand-over, then sends every later chunk to f.
type Adoptee interface {
	Runner
	SetOnOutput(f func([]byte))
}

// AdoptSpec describes a running command that becomes a job.
type AdoptSpec struct {
	Command     string
	ArtifactID  string    // the artifact its whole output goes to
	Started     time.Time // when the command started
	OutputBytes int       // bytes it printed before the hand-over
	Waiting     bool      // it is waiting for input already
	LastOutput  time.Time // when it last printed (zero = now)
}

// Reservation holds a place for a job among MaxJobs until Adopt or Cancel.
type Reservation struct {
	m    *Manager
	used bool
}

// Reserve holds a place for one job, refused as Start refuses: the caller
// then hands over a running command with Adopt, or gives the place back.
func (m *Manager) Reserve() (*Reservation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.roomLocked(); err != nil {
		return nil, err
	}
	m.reserved++
	return &Reservation{m: m}, nil
}

// Cancel gives the place back; after Adopt it does nothing.
func (r *Reservation) Cancel() {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	if !r.used {
		r.used = true
		r.m.reserved--
	}
}

// Adopt makes the running command a job in the reserved place. A manager
// closed meanwhile kills the runner and still returns its job (ended).
func (r *Reservation) Adopt(run Adoptee, spec AdoptSpec) *Job {
	m := r.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if !r.used {
		r.used = true
		m.reserved--
	}
	m.next++
	j := newJob(strconv.Itoa(m.next), spec.Command, spec.ArtifactID)
	j.started = spec.Started
	j.total = spec.OutputBytes
	j.adopted = true
	j.waiting = spec.Waiting
	if !spec.LastOutput.IsZero() {
		j.lastOut.Store(spec.LastOutput.UnixNano())
	}
	j.run = run
	j.tty = run.TTY()
	run.SetOnOutput(j.record)
	go j.monitor()
	m.jobs = append(m.jobs, j)
	if f := m.onChange; f != nil {
		go j.announce(f)
	}
	if m.closed {
		go run.Kill()
	}
	return j
}

// Manager holds the jobs of one agent session.
type Manager struct {
	// MaxJobs bounds the jobs running at once; <= 0 = DefaultMaxJobs.
	MaxJobs int

	mu       sync.Mutex
	jobs     []*Job
	next     int
	reserved int // places held by Reserve
	closed   bool
	onChange func(Change)
}

// Change is one notification of a job's life (see Manager.OnChange).
type Change struct {
	Job   *Job
	State State
	// Started marks a job's first notification; its State is Running or
	// WaitingForInput, never an ended one, so an end always follows it.
	Started bool
}

// OnChange makes f hear of every job started from now on: once when it
// starts, on every turn between running and waiting for input, and once
// when it ends. A job's calls come in order from one goroutine of its own;
// turns quicker than f are merged into the latest state. f must not block
// for long; nil stops the calls for later jobs.
func (m *Manager) OnChange(f func(Change)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onChange = f
}

// NewManager returns an empty manager with the default limit.
func NewManager() *Manager { return &Manager{MaxJobs: DefaultMaxJobs} }

// Start runs spec's command as a new job. It refuses when MaxJobs jobs are
// running or the manager is closed.
func (m *Manager) Start(spec Spec) (*Job, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.roomLocked(); err != nil {
		return nil, err
	}
	m.next++
	j := start(strconv.Itoa(m.next), spec)
	m.jobs = append(m.jobs, j)
	if f := m.onChange; f != nil {
		go j.announce(f)
	}
	return j, nil
}

// roomLocked refuses a new job when the manager is closed or MaxJobs jobs
// run (places held by Reserve count).
func (m *Manager) roomLocked() error {
	if m.closed {
		return ErrClosed
	}
	limit := m.MaxJobs
	if limit <= 0 {
		limit = DefaultMaxJobs
	}
	running := 0
	for _, j := range m.jobs {
		if !j.State().Ended() {
			running++
		}
	}
	if running+m.reserved >= limit {
		return &TooManyError{Running: running}
	}
	return nil
}

// List returns every job of the session, oldest first.
func (m *Manager) List() []*Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]*Job(nil), m.jobs...)
}

// Get finds a job by id; surrounding blanks are ignored ("1", " 1 ").
func (m *Manager) Get(id string) (*Job, bool) {
	id = strings.TrimSpace(id)
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, j := range m.jobs {
		if j.id == id {
			return j, true
		}
	}
	return nil, false
}

// Running counts the jobs that have not ended (waiting ones included).
func (m *Manager) Running() int {
	n := 0
	for _, j := range m.List() {
		if !j.State().Ended() {
			n++
		}
	}
	return n
}

// Close kills every job and returns once all are gone; later starts fail.
func (m *Manager) Close() {
	m.mu.Lock()
	m.closed = true
	jobs := append([]*Job(nil), m.jobs...)
	m.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() { defer wg.Done(); j.Kill() }()
	}
	wg.Wait()
}

// Job is one command running on a terminal.
type Job struct {
	id, command string
	started     time.Time
	run         Runner
	tty         string
	artifactID  string
	adopted     bool // a foreground command that became a job

	lastOut atomic.Int64  // UnixNano of the latest output
	outWake chan struct{} // capacity 1: output came (Settle waits for the first)

	mu      sync.Mutex
	fresh   *sink.TailBuffer // output since the previous read
	newN    int              // bytes since the previous read
	total   int
	waiting bool
	ended   time.Time
	endRead bool // ReadNew ran after the job ended: the reader saw how it ended
	result  *pty.Result
	changed chan struct{} // closed and replaced on every state change
}

func newJob(id, command, artifactID string) *Job {
	j := &Job{
		id: id, command: command, started: time.Now(),
		artifactID: artifactID,
		fresh:      sink.NewTailBuffer(sink.DefaultMaxBytes),
		changed:    make(chan struct{}),
		outWake:    make(chan struct{}, 1),
	}
	j.lastOut.Store(time.Now().UnixNano())
	return j
}

func start(id string, spec Spec) *Job {
	cols, rows := spec.Cols, spec.Rows
	if cols <= 0 {
		cols = DefaultCols
	}
	if rows <= 0 {
		rows = DefaultRows
	}
	j := newJob(id, spec.Command, spec.ArtifactID)
	j.run = pty.Start(context.Background(), pty.Options{
		Shell: spec.Shell, Command: spec.Command, Args: spec.Args, Own: spec.Own, Cwd: spec.Cwd, Env: spec.Env,
		Cols: cols, Rows: rows, Timeout: spec.Timeout,
		ArtifactPath: spec.ArtifactPath, ArtifactID: spec.ArtifactID,
		ArtifactMaxBytes: spec.ArtifactMaxBytes,
		OnOutput:         j.record,
		Sandbox:          spec.Sandbox,
	})
	j.tty = j.run.TTY()
	go j.monitor()
	return j
}

// announce calls f with the job's start, its turns between running and
// waiting for input, and its end.
func (j *Job) announce(f func(Change)) {
	j.mu.Lock()
	st, ch := j.stateLocked(), j.changed
	j.mu.Unlock()
	last := st
	if st.Ended() {
		last = State{Kind: Running}
	}
	f(Change{Job: j, State: last, Started: true})
	for {
		if st != last {
			f(Change{Job: j, State: st})
			last = st
		}
		if st.Ended() {
			return
		}
		<-ch
		j.mu.Lock()
		st, ch = j.stateLocked(), j.changed
		j.mu.Unlock()
	}
}

// record takes a sanitized chunk from the session's sink.
func (j *Job) record(c []byte) {
	j.lastOut.Store(time.Now().UnixNano())
	j.mu.Lock()
	_, _ = j.fresh.Write(c)
	j.newN += len(c)
	j.total += len(c)
	if j.waiting {
		j.waiting = false
		j.notifyLocked()
	}
	j.mu.Unlock()
	select {
	case j.outWake <- struct{}{}:
	default:
	}
}

func (j *Job) notifyLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

// monitor records the end of the session and, while it runs, whether it
// waits for input.
func (j *Job) monitor() {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		select {
		case <-j.run.Done():
			res := j.run.Wait()
			j.mu.Lock()
			j.result, j.ended, j.waiting = &res, time.Now(), false
			j.notifyLocked()
			j.mu.Unlock()
			return
		case <-t.C:
			w := j.readingTerminal()
			j.mu.Lock()
			if w != j.waiting && j.result == nil {
				j.waiting = w
				j.notifyLocked()
			}
			j.mu.Unlock()
		}
	}
}

// readingTerminal asks the kernel whether a process of the job sleeps
// waiting to read the job's terminal (read, or select/poll/epoll on it),
// after QuietForInput without output.
func (j *Job) readingTerminal() bool {
	if j.tty == "" || time.Since(time.Unix(0, j.lastOut.Load())) < QuietForInput {
		return false
	}
	return proc.ReadingTerminal(j.run.ForegroundPgrp(), j.run.Pid(), j.tty)
}

// ID is the job's short id ("1", "2", …).
func (j *Job) ID() string { return j.id }

// Command is the command line the job runs.
func (j *Job) Command() string { return j.command }

// Screen is the job's emulated terminal (its last lines show a prompt).
func (j *Job) Screen() *pty.Screen { return j.run.Screen() }

// Adopted reports whether the job was a foreground command first.
func (j *Job) Adopted() bool { return j.adopted }

// State is the job's state now.
func (j *Job) State() State {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.stateLocked()
}

func (j *Job) stateLocked() State {
	switch {
	case j.result == nil && j.waiting:
		return State{Kind: WaitingForInput}
	case j.result == nil:
		return State{Kind: Running}
	case j.result.ExitCode != nil:
		return State{Kind: Exited, Code: *j.result.ExitCode}
	case j.result.TimedOut:
		return State{Kind: TimedOut}
	case j.result.Cancelled:
		return State{Kind: Killed}
	default:
		return State{Kind: Failed}
	}
}

// Runtime is how long the job has run (until it ended).
func (j *Job) Runtime() time.Duration {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.result != nil {
		return j.ended.Sub(j.started)
	}
	return time.Since(j.started)
}

// OutputBytes is the size of the job's whole output so far.
func (j *Job) OutputBytes() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.total
}

// ReadNew returns the output since the previous ReadNew (the whole output
// on the first) and marks it read.
func (j *Job) ReadNew() Output {
	j.mu.Lock()
	defer j.mu.Unlock()
	text := j.fresh.String()
	out := Output{Text: text, Bytes: j.newN, Truncated: j.newN > len(text), TotalBytes: j.total,
		ArtifactID: j.artifactLocked()}
	if j.result != nil {
		j.endRead = true
	}
	j.fresh = sink.NewTailBuffer(sink.DefaultMaxBytes)
	j.newN = 0
	return out
}

// ReadAfterEnd reports whether ReadNew ran once the job had ended, so
// whoever read it (job_output, job_kill) already knows how it ended.
func (j *Job) ReadAfterEnd() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.endRead
}

// ArtifactID is the artifact holding the job's whole output, once there is
// one; it does not mark anything read.
func (j *Job) ArtifactID() string {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.artifactLocked()
}

func (j *Job) artifactLocked() string {
	switch {
	case j.result != nil:
		return j.result.ArtifactID
	case j.total > sink.DefaultMaxBytes:
		return j.artifactID // the sink spills once the output outgrows its tail
	}
	return ""
}

// Result is the session's outcome once the job has ended: the tail of the
// whole output with its notice ("Command cancelled", …) and the artifact.
func (j *Job) Result() (pty.Result, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.result == nil {
		return pty.Result{}, false
	}
	return *j.result, true
}

// Wait returns the job's state as soon as the job ends or waits for input,
// or when d or ctx is over. A job already waiting or ended returns at once.
func (j *Job) Wait(ctx context.Context, d time.Duration) State {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		j.mu.Lock()
		st, ch := j.stateLocked(), j.changed
		j.mu.Unlock()
		if st.Kind != Running {
			return st
		}
		select {
		case <-ch:
		case <-t.C:
			return j.State()
		case <-ctx.Done():
			return j.State()
		}
	}
}

// Settle waits until the job's output settles: it printed something and
// then nothing for quiet (a server's ready line), or it ended or waits
// for input, or most passed (a silent job), or ctx is done. It returns the
// state then. A job that prints at once returns after about quiet, not
// most.
func (j *Job) Settle(ctx context.Context, most, quiet time.Duration) State {
	end := time.Now().Add(most)
	ending := false // the program has exited: only its end is awaited
	for {
		j.mu.Lock()
		st, ch, seen := j.stateLocked(), j.changed, j.total > 0
		j.mu.Unlock()
		if st.Kind != Running {
			return st
		}
		now := time.Now()
		wake, out := end, j.outWake
		if seen && !ending {
			// From the first output on, only the quiet after the latest
			// one counts: a flood does not wake this loop per chunk.
			if q := time.Unix(0, j.lastOut.Load()).Add(quiet); q.Before(wake) {
				wake = q
			}
			out = nil
		}
		if !wake.After(now) {
			// A program that printed and exited ("echo built; exit 3")
			// is reported with its exit status, however slowly a loaded
			// machine tears its terminal down.
			if pid := j.run.Pid(); wake.Before(end) && pid > 0 && !proc.Alive(pid) {
				ending = true
				continue
			}
			return st
		}
		t := time.NewTimer(wake.Sub(now))
		select {
		case <-ch:
		case <-out:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return j.State()
		}
		t.Stop()
	}
}

// Input writes text to the job's terminal, with \n (the Enter key), \r,
// \t, \e (escape), \\ and \xHH (e.g. \x03 ctrl+c, \x04 ctrl+d) decoded.
func (j *Job) Input(text string) error {
	_, err := j.Write(DecodeInput(text))
	return err
}

// typed records that input went to the job: it is no longer waiting (a
// prompt that does not echo, like a password's, prints nothing to say so).
func (j *Job) typed() {
	j.mu.Lock()
	if j.waiting {
		j.waiting = false
		j.notifyLocked()
	}
	j.mu.Unlock()
}

// Kill ends the job's whole process tree, as a timeout does, and returns
// its final state once nothing of it is left.
func (j *Job) Kill() State {
	j.run.Kill()
	return j.Final()
}

// Final waits for the job to end and returns its final state.
func (j *Job) Final() State {
	<-j.run.Done()
	// The monitor records the result; wait for it so the state is final.
	for {
		j.mu.Lock()
		st, ch := j.stateLocked(), j.changed
		j.mu.Unlock()
		if st.Ended() {
			return st
		}
		<-ch
	}
}

// Done is closed when the job has ended.
func (j *Job) Done() <-chan struct{} { return j.run.Done() }

// DecodeInput turns the escapes a model writes into the bytes a terminal
// gets. A newline, written or as \n, is the Enter key (CR, as a terminal
// sends it: the line discipline makes it a newline for a program reading
// lines, and raw-mode programs see Enter). Unknown escapes stay as written.
func DecodeInput(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\n' {
			out = append(out, '\r')
			continue
		}
		if c != '\\' || i+1 >= len(s) {
			out = append(out, c)
			continue
		}
		switch s[i+1] {
		case 'n', 'r':
			out = append(out, '\r')
			i++
		case 't':
			out = append(out, '\t')
			i++
		case 'e':
			out = append(out, 0x1b)
			i++
		case '\\':
			out = append(out, '\\')
			i++
		case 'x':
			if i+3 < len(s) && isHex(s[i+2]) && isHex(s[i+3]) {
				v, _ := strconv.ParseUint(s[i+2:i+4], 16, 8)
				out = append(out, byte(v))
				i += 3
			} else {
				out = append(out, c)
			}
		default:
			out = append(out, c)
		}
	}
	return out
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

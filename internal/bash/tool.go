package bash

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"agentsh/internal/jobs"
	"agentsh/internal/pty"
	"agentsh/internal/sink"
)

// Timeout bounds of the bash tool, in seconds (spec §1.3).
const (
	DefaultTimeoutSeconds = 300
	MinTimeoutSeconds     = 1
	MaxTimeoutSeconds     = 3600
)

// UpdateInterval is the minimum spacing of live onUpdate snapshots.
const UpdateInterval = 50 * time.Millisecond

// ToolParams are the bash tool's arguments as the model sends them.
type ToolParams struct {
	Command string   `json:"command"`
	Timeout *float64 `json:"timeout,omitempty"`
	Cwd     string   `json:"cwd,omitempty"`
	Head    *int     `json:"head,omitempty"`
	Tail    *int     `json:"tail,omitempty"`
	// Background starts the command as a job (spec §9) and returns at once.
	Background bool `json:"background,omitempty"`
}

// ParseToolParams decodes tool-call arguments, accepting numbers sent as
// strings ("60") and naming the field when a value is unusable.
func ParseToolParams(raw []byte) (ToolParams, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return ToolParams{}, toolErrorf("Invalid bash arguments: %v", err)
	}
	var p ToolParams
	if v, ok := m["command"]; ok {
		if err := json.Unmarshal(v, &p.Command); err != nil {
			return ToolParams{}, toolErrorf("Invalid command: expected a string, got %s", v)
		}
	}
	if v, ok := m["cwd"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &p.Cwd); err != nil {
			return ToolParams{}, toolErrorf("Invalid cwd: expected a string, got %s", v)
		}
	}
	num := func(name string, v json.RawMessage) (float64, error) {
		var f float64
		if err := json.Unmarshal(v, &f); err == nil {
			return f, nil
		}
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			if f, err := strconv.ParseFloat(strings.TrimSpace(s), 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
				return f, nil
			}
		}
		return 0, toolErrorf("Invalid %s: expected a number, got %s", name, v)
	}
	if v, ok := m["timeout"]; ok && string(v) != "null" {
		f, err := num("timeout", v)
		if err != nil {
			return ToolParams{}, err
		}
		p.Timeout = &f
	}
	for _, f := range []struct {
		name string
		dst  **int
	}{{"head", &p.Head}, {"tail", &p.Tail}} {
		if v, ok := m[f.name]; ok && string(v) != "null" {
			x, err := num(f.name, v)
			if err != nil {
				return ToolParams{}, err
			}
			n := int(x)
			*f.dst = &n
		}
	}
	if v, ok := m["background"]; ok && string(v) != "null" {
		b, err := parseBool(v)
		if err != nil {
			return ToolParams{}, toolErrorf("Invalid background: expected true or false, got %s", v)
		}
		p.Background = b
	}
	return p, nil
}

// ClampTimeout turns the requested seconds into the effective timeout.
func ClampTimeout(requested *float64) (time.Duration, float64) {
	secs := float64(DefaultTimeoutSeconds)
	if requested != nil {
		secs = *requested
	}
	if math.IsNaN(secs) || secs < MinTimeoutSeconds {
		secs = MinTimeoutSeconds
	}
	if secs > MaxTimeoutSeconds {
		secs = MaxTimeoutSeconds
	}
	return time.Duration(secs * float64(time.Second)), secs
}

// ArtifactAllocator reserves artifact ids and files for spilled output.
type ArtifactAllocator interface {
	Allocate(kind string) (id, path string, err error)
	Release(id string) // the run did not spill; drop the reservation
}

// DefaultArtifactMaxBytes is the default of settings artifacts.maxBytes.
const DefaultArtifactMaxBytes = sink.DefaultArtifactMaxBytes

// MinArtifactMaxBytes is the smallest artifacts.maxBytes settings accept.
const MinArtifactMaxBytes = sink.MinArtifactMaxBytes

// ToolSettings are the settings the bash tool reads on every call.
type ToolSettings struct {
	VirtualTerminal    string            // "on" | "off"
	InterceptorEnabled bool              // bashInterceptor.enabled
	InterceptorRules   []InterceptorRule // nil = DefaultInterceptorRules()
	Shell              ShellConfig       // resolved shell, prefix, env and snapshot
	ArtifactMaxBytes   int               // artifacts.maxBytes; <= 0 = sink.DefaultArtifactMaxBytes
	MaxJobs            int               // bash.maxJobs, for the mode's job manager; <= 0 = jobs.DefaultMaxJobs
	AutoBackground     time.Duration     // bash.autoBackgroundSeconds: a foreground call becomes a job after this long; 0 = never
	Patterns           []PatternRule     // bash.patterns: allow, ask and deny rules (CheckPatterns), applied by the session's approvals
}

// ToolContext is what the surrounding agent knows at the time of a call.
type ToolContext struct {
	Cwd       string   // session working directory
	ToolNames []string // tools available right now (for the interceptor)
	HasUI     bool
	Terminal  TerminalUI        // the UI's PTY host; nil = headless (default size, no overlay)
	Artifacts ArtifactAllocator // nil = no artifacts
	Settings  ToolSettings
	// SettingsError is why the settings files could not be read for this
	// call (a syntax error saved mid-session): the call fails with it
	// rather than run on settings the user has replaced.
	SettingsError error
	SessionKey    string // "" on the tool path (spec §2.1)
	// BackgroundNow, when closed, moves the running call into the
	// background as a job (the user's ctrl+b); nil = only the automatic
	// rules (bash.autoBackgroundSeconds, waiting for input) apply.
	BackgroundNow <-chan struct{}
	// State is the agent session's shell state: applied to the model's
	// shell before a call, and updated after a call that may change it.
	State *SessionState
	// View is which of State's layers the call's shell gets: ModelView
	// for the model's calls (set by the session); UserView, the zero
	// value, for a command the user let run outside the sandbox (an
	// approved re-run, an allow rule) and for the user's jobs. A UserView
	// call of the tool runs on a fresh shell and records nothing.
	View StateView
}

// TerminalUI is what a UI offers the PTY path (spec §1.5, §3): the size a
// new session starts with and a place to show it while it runs.
type TerminalUI interface {
	// PTYSize is the terminal size for a new session (clamped later).
	PTYSize() (cols, rows int)
	// AttachPTY shows the running session (the overlay) and forwards the
	// user's keys to it; it must not block. The session is over when
	// s.Done() is closed.
	AttachPTY(s *pty.Session, command string)
}

// DefaultPTYCols and DefaultPTYRows size a PTY session when the UI gives no
// size.
const (
	DefaultPTYCols = 120
	DefaultPTYRows = 40
)

// TruncationMeta is details.meta.truncation of a truncated result.
type TruncationMeta struct {
	Direction   string     `json:"direction"`
	TruncatedBy string     `json:"truncatedBy"`
	TotalLines  int        `json:"totalLines"`
	TotalBytes  int        `json:"totalBytes"`
	OutputLines int        `json:"outputLines"`
	OutputBytes int        `json:"outputBytes"`
	ShownRange  ShownRange `json:"shownRange"`
	ArtifactID  string     `json:"artifactId,omitempty"`
	// ArtifactDroppedBytes is how many bytes of the output the capped
	// artifact left out between its head and its tail.
	ArtifactDroppedBytes int `json:"artifactDroppedBytes,omitempty"`
	// ArtifactError says why the full output was not saved (e.g. "no
	// space left on device") when there is no ArtifactID.
	ArtifactError string `json:"artifactError,omitempty"`
	// Stopped (ours): the output was closed when the final pipeline
	// reached an extracted `| head -n N` limit (spec §1.1), so the command
	// printed more than the totals count, which are what was read.
	Stopped bool `json:"stopped,omitempty"`
	// quiet: the stop is the only cut, and the text is exactly what head
	// would have printed; Finalize adds no notice to it.
	quiet bool
}

// ShownRange is the 1-based inclusive line range kept in the result.
type ShownRange struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// OutputMeta groups result metadata shown by renderers.
type OutputMeta struct {
	Truncation *TruncationMeta `json:"truncation,omitempty"`
}

// ToolDetails is the structured side of a bash tool result.
type ToolDetails struct {
	Meta             *OutputMeta `json:"meta,omitempty"`
	ExitCode         *int        `json:"exitCode,omitempty"`
	Cancelled        bool        `json:"cancelled,omitempty"`
	TimeoutSeconds   float64     `json:"timeoutSeconds,omitempty"`
	RequestedTimeout *float64    `json:"requestedTimeoutSeconds,omitempty"`
	TimedOut         bool        `json:"timedOut,omitempty"` // PTY path only (spec §3)
	SuggestedTool    string      `json:"suggestedTool,omitempty"`
	HeadTailApplied  bool        `json:"headTailApplied,omitempty"`
	JobID            string      `json:"jobId,omitempty"` // the command became this job (spec §9)
	// Styled is the output with its SGR colours, for a UI to show
	// (BashResult.Styled; only when ToolContext.HasUI); never sent to the
	// model, which reads the plain text.
	Styled string `json:"styled,omitempty"`
}

// ToolResult is a successful tool result.
type ToolResult struct {
	Text    string      `json:"text"`
	Details ToolDetails `json:"details"`
}

// ToolError is a failed call: the model receives Message as an error result.
type ToolError struct {
	Message string
	Details ToolDetails
}

func (e *ToolError) Error() string { return e.Message }

// toolErrorf builds a *ToolError whose text the model reads verbatim (the
// spec's capitalised messages).
func toolErrorf(format string, args ...any) error {
	return &ToolError{Message: fmt.Sprintf(format, args...)}
}

// ToolAbortError is a call stopped by the caller's abort.
type ToolAbortError struct {
	Message string
	Details ToolDetails
}

func (e *ToolAbortError) Error() string { return e.Message }

// FinalResult is what the model receives: text with the truncation notice,
// the error flag and the details.
type FinalResult struct {
	Content string      `json:"content"`
	IsError bool        `json:"isError"`
	Aborted bool        `json:"aborted,omitempty"`
	Details ToolDetails `json:"details"`
}

// Finalize applies the tool wrapper: errors become error results, and the
// truncation notice goes on the text of both (ours: the reference dropped it
// on errors). Any other error is passed through as an error result.
func Finalize(res *ToolResult, err error) FinalResult {
	var out FinalResult
	var te *ToolError
	var ae *ToolAbortError
	switch {
	case errors.As(err, &ae):
		out = FinalResult{Content: ae.Message, IsError: true, Aborted: true, Details: ae.Details}
	case errors.As(err, &te):
		out = FinalResult{Content: te.Message, IsError: true, Details: te.Details}
	case err != nil:
		out = FinalResult{Content: err.Error(), IsError: true}
	case res != nil:
		out = FinalResult{Content: res.Text, Details: res.Details}
	}
	if out.Details.Meta != nil && out.Details.Meta.Truncation != nil && !out.Details.Meta.Truncation.quiet {
		out.Content += "\n\n[" + TruncationNotice(out.Details.Meta.Truncation) + "]"
	}
	return out
}

// TruncationNotice formats the notice body, e.g.
// "Showing lines 9901-10000 of 10000 (50.0KB limit). Full: artifact://3", or
// "… (50.0KB limit). Full output not saved: no space left on device" when
// the artifact could not be written.
//
// A stop at a head limit with nothing saved says so instead of a total:
// "Showing lines 1-2; output closed after line 2".
func TruncationNotice(t *TruncationMeta) string {
	var b strings.Builder
	if t.Stopped && t.ArtifactID == "" && t.ShownRange.Start >= 1 && t.ShownRange.End >= t.ShownRange.Start {
		fmt.Fprintf(&b, "Showing lines %d-%d; output closed after line %d", t.ShownRange.Start, t.ShownRange.End, t.ShownRange.End)
		if t.ArtifactError != "" {
			b.WriteString(". Full output not saved: " + t.ArtifactError)
		}
		return b.String()
	}
	if t.ShownRange.Start >= 1 && t.ShownRange.End >= t.ShownRange.Start {
		fmt.Fprintf(&b, "Showing lines %d-%d of %d", t.ShownRange.Start, t.ShownRange.End, t.TotalLines)
	} else {
		fmt.Fprintf(&b, "Showing %d of %d lines", t.OutputLines, t.TotalLines)
	}
	if t.TruncatedBy == "bytes" {
		fmt.Fprintf(&b, " (%s limit)", FormatSize(sink.DefaultMaxBytes))
	}
	if t.ArtifactID != "" {
		b.WriteString(". Full: artifact://" + t.ArtifactID)
		if t.ArtifactDroppedBytes > 0 {
			fmt.Fprintf(&b, " (%s dropped from the middle)", FormatSize(t.ArtifactDroppedBytes))
		}
	} else if t.ArtifactError != "" {
		b.WriteString(". Full output not saved: " + t.ArtifactError)
	}
	return b.String()
}

// ArtifactFailure is the reason a notice gives for an artifact that could not
// be reserved or written: the system's word for it ("no space left on
// device", "permission denied") when there is one, since the path in the
// full error says nothing the user can act on that the notice's context
// does not.
func ArtifactFailure(err error) string {
	if err == nil {
		return ""
	}
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno.Error()
	}
	return err.Error()
}

// NoteArtifactFailure records in meta why a truncated run has no artifact:
// the reservation's error, or what the sink writing artPath met (taken from
// sink.TakeArtifactError, which it also clears). Without truncation or with
// an artifact there is nothing to say.
func NoteArtifactFailure(meta *OutputMeta, allocErr error, artPath string) {
	why := allocErr
	if err := sink.TakeArtifactError(artPath); err != nil {
		why = err
	}
	if meta == nil || meta.Truncation == nil || meta.Truncation.ArtifactID != "" || why == nil {
		return
	}
	meta.Truncation.ArtifactError = ArtifactFailure(why)
}

// FormatSize renders a byte count as B/KB/MB/GB with one decimal.
func FormatSize(n int) string {
	switch {
	case n < 1024:
		return fmt.Sprintf("%dB", n)
	case n < 1024*1024:
		return fmt.Sprintf("%.1fKB", float64(n)/1024)
	case n < 1024*1024*1024:
		return fmt.Sprintf("%.1fMB", float64(n)/(1024*1024))
	default:
		return fmt.Sprintf("%.1fGB", float64(n)/(1024*1024*1024))
	}
}

// ResultMeta builds the truncation metadata of a run from its sink summary
// (direction tail), or nil when nothing was cut; it describes the sink's
// buffer, not the text after head/tail filtering. Bang commands use it too.
func ResultMeta(r BashResult) *OutputMeta {
	if !r.Truncated {
		return nil
	}
	by := "bytes"
	if r.OutputBytes >= r.TotalBytes && r.OutputLines < r.TotalLines {
		by = "lines"
	}
	return &OutputMeta{Truncation: &TruncationMeta{
		Direction: "tail", TruncatedBy: by,
		TotalLines: r.TotalLines, TotalBytes: r.TotalBytes,
		OutputLines: r.OutputLines, OutputBytes: r.OutputBytes,
		ShownRange: ShownRange{Start: r.TotalLines - r.OutputLines + 1, End: r.TotalLines},
		ArtifactID: r.ArtifactID, ArtifactDroppedBytes: r.ArtifactDroppedBytes,
	}}
}

// stoppedMeta is the truncation metadata of a run whose output was closed
// at the head limit (BashResult.Stopped) and whose text is text: meta,
// marked stopped, when the output was truncated anyway; otherwise a head
// range of the lines shown, which Finalize does not announce to the model
// (the text is exactly head's), for the UI and the RPC client.
func stoppedMeta(meta *OutputMeta, text string, r BashResult) *OutputMeta {
	if meta != nil && meta.Truncation != nil {
		meta.Truncation.Stopped = true
		return meta
	}
	n := countLines(text)
	return &OutputMeta{Truncation: &TruncationMeta{
		Direction: "head", TruncatedBy: "lines",
		TotalLines: r.TotalLines, TotalBytes: r.TotalBytes,
		OutputLines: n, OutputBytes: len(text),
		ShownRange: ShownRange{Start: 1, End: n},
		Stopped:    true, quiet: true,
	}}
}

// ResolveCwd resolves p against base (expanding ~) and checks it is a
// directory, with the exact spec §1.3 messages.
func ResolveCwd(base, p string) (string, error) {
	if p == "" {
		p = base
	}
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			p = filepath.Join(home, p[1:])
		}
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(base, p)
	}
	p = filepath.Clean(p)
	st, err := os.Stat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return "", toolErrorf("Working directory does not exist: %s", p)
		}
		return "", fmt.Errorf("working directory %s: %w", p, err)
	}
	if !st.IsDir() {
		return "", toolErrorf("Working directory is not a directory: %s", p)
	}
	return p, nil
}

// ShouldUsePTY is the spec §1.5 rule: the PTY path only with
// bash.virtualTerminal "on", a UI, and neither AGENTSH_NO_PTY=1 nor (for
// compatibility) PI_NO_PTY=1 in the environment.
func ShouldUsePTY(virtualTerminal string, hasUI bool, getenv func(string) string) bool {
	return virtualTerminal == "on" && hasUI && getenv("AGENTSH_NO_PTY") != "1" && getenv("PI_NO_PTY") != "1"
}

// Tool is the model's bash tool (spec §1).
type Tool struct {
	Executor *Executor // nil = Default()
	// Jobs is where `background: true` starts jobs; nil = such calls are
	// refused.
	Jobs *jobs.Manager
	// settle bounds a `background: true` call's wait; 0 = BackgroundSettle.
	// Tests raise it, so a loaded machine's slow start is not read as
	// silence.
	settle time.Duration
}

// Execute runs one bash tool call through normalization, interception,
// validation, the engine and result shaping. Failures are *ToolError or
// *ToolAbortError; pass the pair to Finalize for what the model sees.
//
// Head and tail (spec §1.1, §1.6): NormalizeCommand takes one trailing
// `| head -n N` or `| tail -n N` (also -nN, -N) off the command, whatever
// comes before it (`make; ls | head -5`, `for …; done | head -3`,
// `a && b | tail -2`), and the command without it runs. The limit is then
// applied to the command's whole output, stdout and stderr merged as the
// engine merges them (head first, then tail), and the exit status is the
// command's own: `false | head -n 1` and `/bin/false | head -n 1` both exit
// 1, `echo x; seq 1 100 | head -n 3` gives x, 1 and 2. The head and tail
// arguments, when given, replace the extracted values (0 = no limit); the
// extracted ones are only a fallback.
//
// The removed stage's upstream runs in a subshell, as it did as a pipeline
// stage (normalize), and on the non-PTY engine an extracted head stops that
// final pipeline once the output reaches the head count: the output is
// closed, as head would close it, so an endless producer (`yes | head -n 5`)
// ends at once. Statements before it (`make && ./app | head -5`: make) are
// never cut: they run to their end as in bash, and the limit cuts their
// output afterwards (headStop). This gives exactly the first lines the limit
// keeps; the differences from running to the end are that whatever of the
// final pipeline still writes then dies of SIGPIPE (as in `{ make; ls; } |
// head -5`, where the group is that pipeline), and that a SIGPIPE death
// (status 141) of the command is reported as 0, because a pipeline into head
// would have succeeded. A program that ignores SIGPIPE and fails on the
// closed output keeps its own status. A stop that left output unread is in
// details.meta.truncation (stopped). The PTY cannot close its output early:
// there the command runs to its end and the limit cuts the text.
//
// On a truncated output the notice and details.meta.truncation describe
// exactly the lines returned, with the artifact link to the whole output.
func (t *Tool) Execute(ctx context.Context, p ToolParams, tc ToolContext, onUpdate func(string)) (*ToolResult, error) {
	res, err := t.execute(ctx, p, tc, onUpdate)
	if tc.View != ModelView {
		return res, err
	}
	// The first result from the model's shells says which of the user's
	// definitions they leave out, so neither the user nor the model is
	// surprised that `ls` is the standard one there.
	if note := HeldBackNote(tc.Settings.Shell.snapshotTaken()); note != "" {
		var te *ToolError
		switch {
		case res != nil:
			res.Text = note + "\n\n" + res.Text
		case errors.As(err, &te):
			te.Message = note + "\n\n" + te.Message
		}
	}
	return res, err
}

func (t *Tool) execute(ctx context.Context, p ToolParams, tc ToolContext, onUpdate func(string)) (*ToolResult, error) {
	if strings.TrimSpace(p.Command) == "" {
		return nil, &ToolError{Message: "Command must not be empty"}
	}
	if tc.SettingsError != nil {
		return nil, &ToolError{Message: tc.SettingsError.Error()}
	}
	norm, command := normalize(p.Command)
	head, tail := norm.HeadLines, norm.TailLines
	if p.Head != nil {
		head = *p.Head
	}
	if p.Tail != nil {
		tail = *p.Tail
	}
	usePTY := ShouldUsePTY(tc.Settings.VirtualTerminal, tc.HasUI, os.Getenv)
	stopAfter, markNonce := 0, ""
	if norm.HeadLines > 0 && head > 0 && !usePTY && !p.Background {
		stopAfter = head
		// Statements before the final pipeline must run to their end:
		// it starts with a mark, and only after it is the output closed.
		nonce, _ := newNonces()
		if _, marked, ok := normalizeMarked(p.Command, nonce); ok {
			command, markNonce = marked, nonce
		}
	}
	if tc.Settings.InterceptorEnabled {
		rules := tc.Settings.InterceptorRules
		if len(rules) == 0 {
			rules = DefaultInterceptorRules()
		}
		if r := CheckInterception(norm.Command, rules, tc.ToolNames); r.Blocked {
			return nil, &ToolError{Message: BlockedMessage(r.Message, p.Command),
				Details: ToolDetails{SuggestedTool: r.SuggestedTool}}
		}
	}
	if r, ok := tc.Artifacts.(ArtifactResolver); ok {
		expanded, err := expandArtifactURLs(command, r)
		if err != nil {
			return nil, &ToolError{Message: err.Error()}
		}
		command = expanded
	}
	cwd, err := ResolveCwd(tc.Cwd, p.Cwd)
	if err != nil {
		return nil, &ToolError{Message: err.Error()}
	}
	timeout, secs := ClampTimeout(p.Timeout)
	details := ToolDetails{TimeoutSeconds: secs, RequestedTimeout: p.Timeout}

	var artID, artPath string
	var allocErr error
	if tc.Artifacts != nil {
		if id, path, err := tc.Artifacts.Allocate("bash"); err == nil {
			artID, artPath = id, path
		} else {
			allocErr = err
		}
	}

	if p.Background {
		return startJob(ctx, t.Jobs, command, cwd, p.Timeout, artPath, artID, tc, t.settle)
	}

	var res BashResult
	timedOut := false
	if usePTY {
		res, timedOut, err = runPTY(ctx, command, cwd, timeout, artPath, artID, tc, onUpdate)
	} else {
		res, err = t.runEngine(ctx, command, cwd, timeout, artPath, artID, stopSpec{stopAfter, markNonce}, head, tc, onUpdate, p)
	}
	if err == nil && res.Job != nil {
		return jobResult(res, head, tail, artPath, artID, tc, details), nil
	}
	if artID != "" && res.ArtifactID == "" {
		tc.Artifacts.Release(artID)
	}
	if err != nil {
		sink.TakeArtifactError(artPath)
		return nil, &ToolError{Message: err.Error(), Details: details}
	}
	details.Meta = ResultMeta(res)
	NoteArtifactFailure(details.Meta, allocErr, artPath)
	details.ExitCode = res.ExitCode
	details.Styled = res.Styled

	// spec §1.6, in order.
	if res.Cancelled {
		details.Cancelled = true
		text := res.Output
		if text == "" {
			text = "Command aborted"
		}
		if ctx.Err() != nil {
			return nil, &ToolAbortError{Message: text, Details: details}
		}
		return nil, &ToolError{Message: text, Details: details}
	}
	if timedOut {
		details.TimedOut = true
		return nil, &ToolError{Message: res.Output, Details: details}
	}
	if res.ArtifactID == "" {
		artPath = ""
	}
	text, meta, applied := shapeOutput(res, head, tail, artPath)
	if res.Stopped {
		meta, applied = stoppedMeta(meta, text, res), true
	}
	if old := details.Meta; old != nil && old.Truncation != nil && meta != nil && meta.Truncation != nil {
		meta.Truncation.ArtifactError = old.Truncation.ArtifactError // why there is no artifact
	}
	details.Meta, details.HeadTailApplied = meta, applied
	if text == "" {
		text = "(no output)"
	}
	switch {
	case res.ExitCode == nil:
		return nil, &ToolError{Message: text + "\n\nCommand failed: missing exit status", Details: details}
	case *res.ExitCode != 0:
		return nil, &ToolError{Message: fmt.Sprintf("%s\n\nCommand exited with code %d", text, *res.ExitCode), Details: details}
	}
	return &ToolResult{Text: text, Details: details}, nil
}

// stopSpec is when runEngine closes the output early (RunOptions.StopAfterLines
// and StopMarkNonce).
type stopSpec struct {
	lines int
	nonce string
}

// Prestart starts, in the background, the shell a call with tc would run
// on (Executor.Prestart), so the model's first call finds it ready: the
// modes call it with each model request, while the model thinks. Nothing
// is started for a call that would not use the engine's shells (the PTY
// path), for broken settings, or for a context whose calls run on a fresh
// shell each.
func (t *Tool) Prestart(tc ToolContext) {
	if tc.SettingsError != nil || ShouldUsePTY(tc.Settings.VirtualTerminal, tc.HasUI, os.Getenv) {
		return
	}
	ex := t.Executor
	if ex == nil {
		ex = Default()
	}
	ex.Prestart(RunOptions{Shell: tc.Settings.Shell, SessionKey: tc.SessionKey, Cwd: tc.Cwd, Jobs: t.Jobs,
		State: tc.State, View: tc.View, Fresh: tc.State != nil && tc.View == UserView})
}

// runEngine runs the command on the non-interactive engine (spec §2).
func (t *Tool) runEngine(ctx context.Context, command, cwd string, timeout time.Duration, artPath, artID string,
	stop stopSpec, head int, tc ToolContext, onUpdate func(string), p ToolParams) (BashResult, error) {
	var up *updater
	if onUpdate != nil {
		up = newUpdater(onUpdate, tc.HasUI)
	}
	opts := RunOptions{
		Shell: tc.Settings.Shell, SessionKey: tc.SessionKey, Cwd: cwd, Timeout: timeout,
		ArtifactPath: artPath, ArtifactID: artID, StopAfterLines: stop.lines, StopMarkNonce: stop.nonce,
		ArtifactMaxBytes: tc.Settings.ArtifactMaxBytes,
		// The tail buffer loses the first lines of a long output; the
		// executor keeps them aside for the head argument.
		CaptureHeadLines: max(head, 0),
		State:            tc.State,
		View:             tc.View,
		// A command that outlasts bash.autoBackgroundSeconds, waits for
		// input or is moved by the user becomes a job (spec §9); the
		// model's own timeout still kills it then.
		Jobs: t.Jobs, AutoBackground: tc.Settings.AutoBackground, BackgroundNow: tc.BackgroundNow,
		KeepTimeout: p.Timeout != nil, JobCommand: p.Command,
	}
	switch {
	case tc.State != nil && tc.View == UserView:
		// Outside the sandbox on the user's say-so: a shell with only
		// the user's state, which no earlier command of the model used.
		opts.Fresh = true
	case tc.State != nil && MayChangeState(command, tc.State.Functions(tc.View)):
		opts.Capture = CaptureShell
	}
	switch {
	case tc.HasUI && up != nil:
		// The UI shows the output in colour, live and at the end; the
		// model's text stays plain.
		opts.OnStyledChunk = up.chunk
	case tc.HasUI:
		opts.OnStyledChunk = func([]byte) {}
	case up != nil:
		opts.OnChunk = up.chunk
	}
	ex := t.Executor
	if ex == nil {
		ex = Default()
	}
	res, err := ex.Run(ctx, command, opts)
	if up != nil {
		up.stop()
	}
	return res, err
}

// runPTY runs the command in a pseudo-terminal (spec §3) from the
// session's rc snapshot and state, as a job starts (newPTYStart), with the
// hardened environment. Its output streams to onUpdate
// like the engine's; the UI's overlay opens only when the program takes
// the screen (alternate screen) or waits for input. The result carries an
// explicit timeout flag.
func runPTY(ctx context.Context, command, cwd string, timeout time.Duration, artPath, artID string, tc ToolContext,
	onUpdate func(string)) (BashResult, bool, error) {
	shell, err := ResolveShell(tc.Settings.Shell.Path)
	if err != nil {
		return BashResult{}, false, err
	}
	if tc.Settings.Shell.Prefix != "" {
		command = tc.Settings.Shell.Prefix + " " + command
	}
	cols, rows := DefaultPTYCols, DefaultPTYRows
	if tc.Terminal != nil {
		cols, rows = tc.Terminal.PTYSize()
	}
	var up *updater
	var onOutput func([]byte)
	if onUpdate != nil {
		up = newUpdater(onUpdate, false)
		onOutput = up.chunk
	}
	var onTakeover func(pty.Takeover)
	took := make(chan struct{}, 1)
	if tc.Terminal != nil {
		onTakeover = func(pty.Takeover) { took <- struct{}{} }
	}
	ps, err := newPTYStart(tc, shell, command)
	if err != nil {
		// A start failure, in spec §3's shape: "PTY error: …", no status.
		return BashResult{Output: "PTY error: " + err.Error() + "\n"}, false, nil
	}
	s := pty.Start(ctx, pty.Options{
		Shell: shell, Command: command, Args: ps.args, Own: []string{ps.dir}, Cwd: cwd, Env: ps.env,
		Cols: cols, Rows: rows, Timeout: timeout,
		ArtifactPath: artPath, ArtifactID: artID, ArtifactMaxBytes: tc.Settings.ArtifactMaxBytes,
		OnOutput: onOutput, OnTakeover: onTakeover,
		Sandbox: tc.Settings.Shell.Sandbox,
	})
	if tc.Terminal != nil {
		go func() {
			select {
			case <-took:
				tc.Terminal.AttachPTY(s, command)
			case <-s.Done():
			}
		}()
	}
	r := s.Wait()
	if up != nil {
		up.stop()
	}
	return BashResult{
		Output: r.Output, ExitCode: r.ExitCode, Cancelled: r.Cancelled, Truncated: r.Truncated,
		TotalLines: r.TotalLines, TotalBytes: r.TotalBytes, OutputLines: r.OutputLines,
		OutputBytes: r.OutputBytes, ArtifactID: r.ArtifactID,
		ArtifactDroppedBytes: r.DroppedBytes, ArtifactHeadLines: r.HeadLines,
	}, r.TimedOut, nil
}

// updater turns output chunks into onUpdate snapshots of the tail, at most
// one per UpdateInterval, sent from its own goroutine so a slow consumer
// never slows the read loop; stop flushes the last state.
type updater struct {
	mu     sync.Mutex
	tail   *sink.TailBuffer
	dirty  bool
	wake   chan struct{}
	quit   chan struct{}
	done   chan struct{}
	notify func(string)
}

// newUpdater sends snapshots of the output to notify; styled ones keep
// the SGR sequences (the chunks must be styled too).
func newUpdater(notify func(string), styled bool) *updater {
	tail := sink.NewTailBuffer(0)
	if styled {
		tail = sink.NewStyledTailBuffer(0)
	}
	u := &updater{tail: tail, wake: make(chan struct{}, 1),
		quit: make(chan struct{}), done: make(chan struct{}), notify: notify}
	go u.loop()
	return u
}

func (u *updater) chunk(b []byte) {
	u.mu.Lock()
	_, _ = u.tail.Write(b)
	u.dirty = true
	u.mu.Unlock()
	select {
	case u.wake <- struct{}{}:
	default:
	}
}

func (u *updater) flush() {
	u.mu.Lock()
	if !u.dirty {
		u.mu.Unlock()
		return
	}
	u.dirty = false
	s := u.tail.String()
	u.mu.Unlock()
	u.notify(s)
}

func (u *updater) loop() {
	defer close(u.done)
	for {
		select {
		case <-u.wake:
			u.flush()
			select {
			case <-time.After(UpdateInterval):
			case <-u.quit:
				u.flush()
				return
			}
		case <-u.quit:
			u.flush()
			return
		}
	}
}

func (u *updater) stop() {
	close(u.quit)
	<-u.done
}

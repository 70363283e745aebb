package render

// The display of a tool call is decided here once, for the three places
// that show one: the live transcript (the call starts, its output streams,
// its result arrives), a resumed transcript (rebuilt from the saved call
// and result) and an exported file. Each only supplies the data it has and
// draws; which block, with which header and which result facts, comes from
// NewToolView and NewResultView, so a call looks the same whichever way it
// reached the screen or the page.

import (
	"encoding/json"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"agentsh/internal/bash"
	"agentsh/internal/tools"
)

// ToolKind is which block shows a tool call.
type ToolKind uint8

const (
	// ToolBash is the bash tool: its command line, then its output.
	ToolBash ToolKind = iota
	// ToolFile is read, grep, find, edit or write: a header summarising
	// the result, then a small body (FileCall).
	ToolFile
	// ToolOther is any other tool (the job tools, a name no tool has):
	// its name and arguments as the command line, then its output.
	ToolOther
)

// String names the kind, for tests and diagnostics.
func (k ToolKind) String() string {
	switch k {
	case ToolBash:
		return "bash"
	case ToolFile:
		return "file"
	}
	return "other"
}

// KindOf is the block of the tool named name.
func KindOf(name string) ToolKind {
	switch name {
	case tools.BashName:
		return ToolBash
	case tools.ReadName, tools.GrepName, tools.FindName, tools.EditName, tools.WriteName:
		return ToolFile
	}
	return ToolOther
}

// Call is a tool call as the model sent it.
type Call struct {
	Name string
	Args json.RawMessage
}

// Result is what a tool call returned: the text the model read, the
// tool's details and whether it failed.
type Result struct {
	Content string
	Details json.RawMessage
	IsError bool
}

// ToolOptions are what the showing place knows besides the call.
type ToolOptions struct {
	// Cwd is the session's directory, against which a bash call's own
	// cwd is shown.
	Cwd string
	// Plain leaves the output's colours out: a resumed transcript draws
	// the saved output without them, as its `!` blocks are.
	Plain bool
}

// ToolView is the display decided for one tool call and its result.
type ToolView struct {
	Kind ToolKind
	Name string
	Args json.RawMessage
	// HasResult is false while the call runs, or when no result was
	// saved; Result is its display otherwise. A value, not a pointer: a
	// resumed session makes one per call, and they cost no allocation.
	HasResult bool
	Result    ResultView

	cwd string // the session's, for Header
}

// NewToolView decides how c and its result r (nil: none yet, or none
// saved) are shown.
func NewToolView(c Call, r *Result, opts ToolOptions) ToolView {
	v := ToolView{Kind: KindOf(c.Name), Name: c.Name, Args: c.Args, cwd: opts.Cwd}
	if r != nil {
		v.HasResult, v.Result = true, NewResultView(*r, opts)
	}
	return v
}

// Header is the head of a ToolCall block: the command line and what is
// shown around it.
type Header struct {
	// Command is what the block shows after "$ ": the bash command (the
	// raw arguments when they do not parse), or another tool's name and
	// arguments.
	Command string
	// CwdRel is "" for the session's cwd, else the directory shown in
	// `cd <rel> &&` (bash only).
	CwdRel string
	// TimeoutSeconds is the timeout the model gave a bash call, clamped as
	// it runs with; 0 when it gave none.
	TimeoutSeconds float64
}

// Header is the head of v's ToolCall block; a file tool has none (its
// FileCall reads the arguments itself). Only the terminal asks for it, so
// a document does not pay for parsing it.
func (v *ToolView) Header() Header {
	switch v.Kind {
	case ToolOther:
		return Header{Command: v.Name + " " + string(v.Args)}
	case ToolFile:
		return Header{}
	}
	p, err := bash.ParseToolParams(v.Args)
	if err != nil {
		return Header{Command: string(v.Args)}
	}
	h := Header{Command: p.Command}
	if p.Timeout != nil {
		_, h.TimeoutSeconds = bash.ClampTimeout(p.Timeout)
	}
	if p.Cwd != "" {
		rel := p.Cwd
		if filepath.IsAbs(p.Cwd) {
			if r, err := filepath.Rel(v.cwd, p.Cwd); err == nil && !strings.HasPrefix(r, "..") {
				rel = r
			}
		}
		if filepath.Clean(rel) != "." {
			h.CwdRel = rel
		}
	}
	return h
}

// Arg is one argument of a call shown beside its command line.
type Arg struct {
	Name  string
	Value string // compact JSON, as readable text
}

// CommandLine is how a document shows a bash call: its command, and its
// other arguments sorted by name; ok is false when the call has no
// command to show (another tool, arguments without a string command),
// and the document shows its arguments instead (ArgsText).
func (v *ToolView) CommandLine() (command string, args []Arg, ok bool) {
	if v.Kind != ToolBash {
		return "", nil, false
	}
	var m map[string]json.RawMessage
	_ = json.Unmarshal(v.Args, &m)
	if json.Unmarshal(m["command"], &command) != nil || command == "" {
		return "", nil, false
	}
	delete(m, "command")
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		args = append(args, Arg{Name: k, Value: readableJSON(m[k], "")})
	}
	return command, args, true
}

// ArgsText is the call's arguments as indented JSON a reader can follow;
// "" when there are none.
func (v *ToolView) ArgsText() string {
	if s := readableJSON(v.Args, "  "); s != "{}" {
		return s
	}
	return ""
}

// readableJSON is raw re-encoded with indent and without Go's \u003c
// escapes (a document escapes it), raw itself when it is not JSON.
func readableJSON(raw json.RawMessage, indent string) string {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return string(raw)
	}
	var p strings.Builder
	enc := json.NewEncoder(&p)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if enc.Encode(v) != nil {
		return string(raw)
	}
	return strings.TrimSuffix(p.String(), "\n")
}

// ResultView is the display decided for a tool call's result.
type ResultView struct {
	Content string
	Details json.RawMessage
	IsError bool
	// Truncation and JobID come from bash details that decode whole; the
	// block warns of the first and shows the second as a job.
	Truncation *bash.TruncationMeta
	JobID      string
	// Styled is the output with its colours (the details' styled output),
	// "" with ToolOptions.Plain.
	Styled string

	// What the details say of the end, as far as they decode: a document
	// still shows what they hold.
	exitCode            *int
	cancelled, timedOut bool
	job                 string
}

// NewResultView decides how r is shown, alone (a result whose call is not
// in the transcript) or under its call.
func NewResultView(r Result, opts ToolOptions) ResultView {
	v := ResultView{Content: r.Content, Details: r.Details, IsError: r.IsError}
	if len(r.Details) == 0 {
		return v
	}
	var d bash.ToolDetails
	if json.Unmarshal(r.Details, &d) == nil {
		if d.Meta != nil {
			v.Truncation = d.Meta.Truncation
		}
		v.JobID = d.JobID
	}
	if !opts.Plain {
		v.Styled = d.Styled
	}
	v.exitCode, v.cancelled, v.timedOut, v.job = d.ExitCode, d.Cancelled, d.TimedOut, d.JobID
	return v
}

// Badges are the result's short facts a document shows before its output:
// how it ended (cancelled, timed out, its exit code) and the job it became.
func (v *ResultView) Badges() []string {
	var badges []string
	switch {
	case v.cancelled:
		badges = append(badges, "cancelled")
	case v.timedOut:
		badges = append(badges, "timed out")
	case v.exitCode != nil:
		badges = append(badges, "exit "+strconv.Itoa(*v.exitCode))
	}
	if v.job != "" {
		badges = append(badges, "job "+v.job)
	}
	return badges
}

// Failed reports whether a document marks the result as an error: an
// error result, or a command that exited non-zero.
func (v *ResultView) Failed() bool {
	return v.IsError || (v.exitCode != nil && *v.exitCode != 0)
}

// ToolBlock is the transcript block of one tool call: File for the file
// tools, else Call (bash, and another tool under its name and arguments).
// Exactly one is set.
type ToolBlock struct {
	Call *ToolCall
	File *FileCall
}

// NewToolBlock is the block showing v: running while v has no result and
// running is set (a live call that starts), else finished with v's result.
func NewToolBlock(v *ToolView, running bool) ToolBlock {
	var b ToolBlock
	if v.Kind == ToolFile {
		b.File = &FileCall{Tool: v.Name, Args: v.Args, Running: running}
	} else {
		h := v.Header()
		b.Call = &ToolCall{Command: h.Command, CwdRel: h.CwdRel, TimeoutSeconds: h.TimeoutSeconds, Running: running}
	}
	switch {
	case v.HasResult:
		b.Finish(&v.Result)
	case !running:
		b.Finish(nil)
	}
	return b
}

// NewStreamingBlock is the block of a call whose arguments the model is
// still sending: a bash call shows its command as far as it has arrived
// (set Command); ok is false for another tool, which shows nothing until
// it runs, its place in the transcript kept.
func NewStreamingBlock(name string) (b ToolBlock, ok bool) {
	if KindOf(name) != ToolBash {
		return b, false
	}
	return ToolBlock{Call: &ToolCall{Running: true, Streaming: true}}, true
}

// Finish ends the block with the result r, or without one (nil: the turn
// ended before it came). Nothing else changes, so a block expanded while
// it ran stays expanded.
func (b ToolBlock) Finish(r *ResultView) {
	if f := b.File; f != nil {
		f.Running = false
		if r != nil {
			f.IsError, f.Output, f.Details = r.IsError, r.Content, r.Details
		}
		return
	}
	c := b.Call
	c.Running = false
	if r == nil {
		return
	}
	c.IsError, c.Output = r.IsError, r.Content
	c.Truncation, c.JobID, c.Styled = r.Truncation, r.JobID, r.Styled
}

// View renders the block at width cells (the block's own View).
func (b ToolBlock) View(width int, th Theme) string {
	if b.File != nil {
		return b.File.View(width, th)
	}
	return b.Call.View(width, th)
}

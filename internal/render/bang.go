package render

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/bash"
	"agentsh/internal/sink"
)

// BangState is the state of a user's !command.
type BangState int

// The states are distinct on screen: running has the spinner, the others a
// status line (none for complete).
const (
	BangRunning   BangState = iota // BangRunning is set until Finish.
	BangComplete                   // BangComplete is a zero or unknown exit.
	BangCancelled                  // BangCancelled is an esc or a hard timeout.
	BangError                      // BangError is a defined non-zero exit.
	BangJob                        // BangJob went on as a job (waiting for input, or ctrl+b).
)

// MaxLineChars caps each line of a bang block: one megabyte line from
// `cat` of a minified file would otherwise cost a wrap of thousands of rows.
const MaxLineChars = 4000

// BangPreviewLines is how many lines a collapsed bang block shows, each in
// at most BangLineRows rows: a long wrapped line must not push the lines
// before it out of the preview.
const (
	BangPreviewLines = 20
	BangLineRows     = 3
)

// The live buffer keeps only a tail: the final output replaces it anyway,
// and `!yes` must not grow memory without bound while it runs.
const (
	maxLiveLines = 2000
	maxLiveBytes = 1 << 20
)

// Bang is the BashExecutionComponent of a `!cmd` or `!!cmd` (spec §5). It is
// not safe for concurrent use; the TUI feeds it from its update loop.
type Bang struct {
	Command  string // Command is the text after the bangs, trimmed.
	Excluded bool   // Excluded is `!!`: shown dim and kept out of the model's context.
	Expanded bool   // Expanded is toggled by ctrl+o.
	// Styled is the finished output with its SGR colours
	// (bash.BashResult.Styled); the block shows them unless NO_COLOR.
	// "" = plain. Chunks streamed with their colours show them too.
	Styled string
	// Elapsed is how long the command has run, shown while it runs; the
	// caller sets it before each frame.
	Elapsed time.Duration
	// FullScreen: the program used the alternate screen (vim, less, top),
	// so its output is its last screen. Once it has ended the collapsed
	// block is one line, the command and how it ended; the screen shows
	// expanded (not 20 rows of `~` after `!vim notes.txt`).
	FullScreen bool

	state      BangState
	cancelNote string // the status of a cancelled run: CancelledStatus or the timeout
	exitCode   *int
	jobID      string
	trunc      *bash.TruncationMeta

	lines     []string // capped logical lines; lines[head:] are live
	head      int
	liveBytes int
	dropped   int // lines evicted from the live tail, still counted as hidden

	partial        string // the unterminated last line, capped
	partialRunes   int
	partialOmitted int
	cr             bool   // a CR came last: text after it overwrites the partial line
	sgr            bool   // a streamed chunk had SGR sequences
	text           string // the finished output as shown, for Styled
	overlay        overlayCache

	version uint64 // bumped by every mutation, so View can trust its cache
	cache   bangCache
	renders int
}

type bangKey struct {
	version            uint64
	width              int
	expanded, excluded bool
	fullScreen         bool
	noColor            bool
	command, spinner   string
	styled             string
	elapsed            string
}

type bangCache struct {
	valid bool
	key   bangKey
	out   string
}

// NewBang starts a running bang block.
func NewBang(command string, excluded bool) *Bang {
	return &Bang{Command: command, Excluded: excluded}
}

// State reports the run state.
func (b *Bang) State() BangState { return b.state }

// Truncation is the truncation metadata of the finished command (nil when
// its output was complete).
func (b *Bang) Truncation() *bash.TruncationMeta { return b.trunc }

// ExitCode is the exit code given to Finish, nil while running or unknown.
func (b *Bang) ExitCode() *int { return b.exitCode }

// Append streams a sanitized chunk: its first piece continues the previous
// partial line, and a CR returns to that line's start, so the text after it
// replaces the line (a progress bar stays one line). Chunks after Finish
// are late deliveries and are ignored.
func (b *Bang) Append(chunk string) {
	if chunk == "" || b.state != BangRunning {
		return
	}
	b.version++
	if !b.sgr && strings.IndexByte(chunk, 0x1b) >= 0 {
		b.sgr = true
	}
	if b.cr || strings.IndexByte(chunk, '\r') >= 0 {
		b.appendCR(chunk)
		return
	}
	last := strings.LastIndexByte(chunk, '\n')
	if last < 0 {
		b.addPartial(chunk)
		return
	}
	body, rest := chunk[:last], chunk[last+1:]
	if n := strings.Count(body, "\n") + 1; n > maxLiveLines {
		// The early lines of a huge chunk would be evicted at once; skip
		// them without copying, which keeps `!yes` cheap.
		skip := n - maxLiveLines
		b.resetPartial()
		b.dropped += skip
		for range skip {
			body = body[strings.IndexByte(body, '\n')+1:]
		}
	}
	for {
		i := strings.IndexByte(body, '\n')
		if i < 0 {
			b.addPartial(body)
			b.pushLine(b.takePartial())
			break
		}
		b.addPartial(body[:i])
		b.pushLine(b.takePartial())
		body = body[i+1:]
	}
	b.addPartial(rest)
}

// Finish ends the run. The final output replaces the streamed lines because
// it is what the sink kept and what the session records.
func (b *Bang) Finish(output string, exitCode *int, cancelled bool, trunc *bash.TruncationMeta) {
	b.version++
	switch {
	case cancelled:
		b.state = BangCancelled
	case exitCode != nil && *exitCode != 0:
		b.state = BangError
	default:
		b.state = BangComplete
	}
	if exitCode != nil {
		v := *exitCode
		b.exitCode = &v
	}
	if trunc != nil {
		t := *trunc
		b.trunc = &t
	}
	b.resetPartial()
	b.lines, b.head, b.liveBytes, b.dropped = nil, 0, 0, 0
	text := sink.Sanitize(output)
	if cancelled {
		// The engine's annotation leads the output (spec §2.3); the block
		// shows it once, as the status after the output.
		text, b.cancelNote = cutCancelled(text)
		if b.cancelNote == "" {
			b.cancelNote = CancelledStatus
		}
	}
	b.text = text
	for _, l := range splitLines(text) {
		b.lines = append(b.lines, capLine(l))
	}
}

// shownLines are the logical lines as drawn: coloured from Styled once
// finished, the streamed ones with their own colours while running, each
// carrying its style; plain under NO_COLOR.
func (b *Bang) shownLines(th Theme) (lines []string, styled bool) {
	lines = b.logical()
	if th.NoColor {
		if b.sgr {
			lines = plainLines(lines)
		}
		return lines, false
	}
	if b.state != BangRunning && b.Styled != "" {
		if st, ok := b.overlay.get(b.text, b.Styled); ok {
			lines = splitLines(st)
			for i, l := range lines {
				lines[i] = capStyledLine(l)
			}
			return selfContained(lines), true
		}
	}
	if b.state == BangRunning && b.sgr {
		return selfContained(lines), true
	}
	return lines, false
}

// appendCR is Append for a chunk with CRs, a line at a time.
func (b *Bang) appendCR(chunk string) {
	for {
		i := strings.IndexByte(chunk, '\n')
		line := chunk
		if i >= 0 {
			line = chunk[:i]
		}
		for {
			j := strings.IndexByte(line, '\r')
			seg := line
			if j >= 0 {
				seg = line[:j]
			}
			if seg != "" && b.cr {
				b.resetPartial()
			}
			if seg != "" {
				b.cr = false
				b.addPartial(seg)
			}
			if j < 0 {
				break
			}
			b.cr = true
			line = line[j+1:]
		}
		if i < 0 {
			return
		}
		b.cr = false
		b.pushLine(b.takePartial())
		chunk = chunk[i+1:]
	}
}

// fullScreenLine appends a finished full-screen program's collapsed block
// to out: `$ vim notes.txt · exited 0`, and how to see its last screen.
func (b *Bang) fullScreenLine(out []string, th Theme, frame lipgloss.Style, w int) []string {
	status, style := "ended", frame
	switch {
	case b.state == BangCancelled:
		status, style = b.cancelNote, th.Warning
	case b.exitCode != nil:
		status = fmt.Sprintf("exited %d", *b.exitCode)
		if b.state == BangError {
			style = th.Error
		}
	}
	cmd, hint := "$ "+sink.Sanitize(b.Command)+" · ", "("+ExpandAction+")"
	if ansi.StringWidth(cmd+status+" "+hint) <= w {
		return append(out, th.paint(frame.Bold(true), cmd)+th.paint(style.Bold(true), status)+" "+th.paint(th.Dim, hint))
	}
	out = appendStyled(out, th, frame.Bold(true), "", cmd+status, w)
	return appendStyled(out, th, th.Dim, "", hint, w)
}

// FinishAsJob ends the block of a command that went on as job id: output
// is what it printed so far, with the session's notice saying why.
func (b *Bang) FinishAsJob(output, id string, trunc *bash.TruncationMeta) {
	b.Finish(output, nil, false, trunc)
	b.state, b.jobID = BangJob, id
}

// JobID is the job the command became, "" unless the state is BangJob.
func (b *Bang) JobID() string { return b.jobID }

// JobBadge is the status line of a bang block or tool call whose command
// went on as job id: it did not fail, it is still someone's to follow.
func JobBadge(id string) string { return "→ job " + id }

// excludedLabel titles the top border of a `!!` block.
const excludedLabel = "not sent to the model"

// omittedSuffix marks where a capped line was cut.
func omittedSuffix(n int) string { return fmt.Sprintf("… [%d chars omitted]", n) }

// capLine limits a line to MaxLineChars characters.
func capLine(s string) string {
	if len(s) <= MaxLineChars {
		return s
	}
	n := utf8.RuneCountInString(s)
	if n <= MaxLineChars {
		return s
	}
	return s[:runeOffset(s, MaxLineChars)] + omittedSuffix(n-MaxLineChars)
}

// runeOffset is the byte offset of the k-th rune of s.
func runeOffset(s string, k int) int {
	i := 0
	for ; k > 0 && i < len(s); k-- {
		_, sz := utf8.DecodeRuneInString(s[i:])
		i += sz
	}
	return i
}

// addPartial extends the partial line, capping it as it grows so a stream
// without newlines holds at most MaxLineChars characters.
func (b *Bang) addPartial(p string) {
	if p == "" {
		return
	}
	if b.partialRunes >= MaxLineChars {
		b.partialOmitted += utf8.RuneCountInString(p)
		return
	}
	n := utf8.RuneCountInString(p)
	if b.partialRunes+n <= MaxLineChars {
		b.partial += p
		b.partialRunes += n
		return
	}
	keep := MaxLineChars - b.partialRunes
	cut := p[:runeOffset(p, keep)]
	if i := strings.LastIndexByte(cut, 0x1b); i >= 0 && strings.IndexByte(cut[i:], 'm') < 0 {
		cut = cut[:i] // never half a colour sequence
	}
	b.partial += cut
	b.partialRunes = MaxLineChars
	b.partialOmitted += n - keep
}

// partialLine is the partial line as displayed.
func (b *Bang) partialLine() string {
	if b.partialOmitted > 0 {
		return b.partial + omittedSuffix(b.partialOmitted)
	}
	return b.partial
}

// takePartial returns the finished line and resets the partial state. The
// clone detaches it from the caller's chunk, which may be large.
func (b *Bang) takePartial() string {
	l := strings.Clone(b.partialLine())
	b.resetPartial()
	return l
}

func (b *Bang) resetPartial() {
	b.partial, b.partialRunes, b.partialOmitted = "", 0, 0
}

// pushLine adds a complete line to the live tail, evicting the oldest lines
// beyond the line and byte budgets.
func (b *Bang) pushLine(l string) {
	b.lines = append(b.lines, l)
	b.liveBytes += len(l)
	for len(b.lines)-b.head > 1 && (len(b.lines)-b.head > maxLiveLines || b.liveBytes > maxLiveBytes) {
		b.liveBytes -= len(b.lines[b.head])
		b.lines[b.head] = ""
		b.head++
		b.dropped++
	}
	if b.head > 1024 && b.head*2 > len(b.lines) {
		n := copy(b.lines, b.lines[b.head:])
		clear(b.lines[n:])
		b.lines, b.head = b.lines[:n], 0
	}
}

// logical returns the lines to display, including the partial line.
func (b *Bang) logical() []string {
	ls := b.lines[b.head:]
	if b.partial != "" || b.partialOmitted > 0 {
		ls = append(ls[:len(ls):len(ls)], b.partialLine())
	}
	return ls
}

// View renders the block at width cells. spinnerFrame is drawn only while
// running, so a ticking spinner does not invalidate finished blocks.
func (b *Bang) View(width int, th Theme, spinnerFrame string) string {
	if b.state != BangRunning {
		spinnerFrame = ""
	}
	k := bangKey{
		version: b.version, width: width, expanded: b.Expanded, excluded: b.Excluded, fullScreen: b.FullScreen,
		noColor: th.NoColor, command: b.Command, spinner: spinnerFrame, styled: b.Styled,
	}
	if b.state == BangRunning {
		k.elapsed = FormatElapsed(b.Elapsed)
	}
	if b.cache.valid && b.cache.key == k {
		return b.cache.out
	}
	b.renders++
	out := b.render(width, th, spinnerFrame)
	b.cache = bangCache{valid: true, key: k, out: out}
	return out
}

func (b *Bang) render(width int, th Theme, spinnerFrame string) string {
	w := max(width, 1)
	frame := th.Bash
	if b.Excluded {
		frame = th.Dim
	}
	border := th.paint(frame, strings.Repeat("─", w))
	top := border
	if b.Excluded && w >= len(excludedLabel)+4 {
		// Dim alone is invisible under NO_COLOR; the label says why the
		// block is grey without costing a row.
		top = th.paint(frame, "── "+excludedLabel+" "+strings.Repeat("─", w-ansi.StringWidth(excludedLabel)-4))
	}
	out := []string{top}
	if b.FullScreen && !b.Expanded && b.state != BangRunning && b.state != BangJob {
		return strings.Join(append(b.fullScreenLine(out, th, frame, w), border), "\n")
	}
	out = appendStyled(out, th, frame.Bold(true), "", "$ "+sink.Sanitize(b.Command), w)

	h := hidden{before: b.dropped}
	if b.trunc != nil {
		h = hiddenOf(b.trunc)
	}
	lines, styled := b.shownLines(th)
	top, vis, bottom := layout(lines, w, BangPreviewLines, 0, BangLineRows, b.Expanded, h)
	if styled {
		vis = selfContained(vis)
	}
	if top != "" {
		out = appendStyled(out, th, th.Dim, "", top, w)
	}
	out = append(out, vis...)
	if bottom != "" {
		out = appendStyled(out, th, th.Dim, "", bottom, w)
	}

	switch b.state {
	case BangRunning:
		text := RunningText(b.Elapsed)
		if spinnerFrame != "" {
			text = spinnerFrame + " " + text
		}
		out = appendStyled(out, th, frame, "", text, w)
	case BangCancelled:
		out = appendStyled(out, th, th.Warning, "", b.cancelNote, w)
	case BangError:
		out = appendStyled(out, th, th.Error, "", fmt.Sprintf("(exit %d)", *b.exitCode), w)
	case BangJob:
		out = appendStyled(out, th, th.Accent, "", JobBadge(b.jobID), w)
	}
	if b.state != BangRunning && b.trunc != nil {
		out = appendStyled(out, th, th.Warning, "", TruncationWarning(b.trunc), w)
	}
	out = append(out, border)
	return strings.Join(out, "\n")
}

package render

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/sink"
	"agentsh/internal/tools"
)

// Collapsed sizes of a file tool call's body.
const (
	FilePreviewLines  = 5  // result lines of a collapsed grep, find or unknown call
	DiffPreviewLines  = 12 // diff lines of a collapsed edit
	ErrorPreviewLines = 3  // visual lines of a collapsed error
)

// minShrink is the narrowest a path or pattern is squeezed to (with a "…"
// in the middle) before the header's statistics move to a line of their own.
const minShrink = 16

// ReadHint is the dim line of a collapsed read that returned n lines.
func ReadHint(n int) string {
	return "… (" + countNoun(n, "line", "lines") + " read) (ctrl+o to expand)"
}

// FileCall is one call of a file tool (read, grep, find, edit, write) in
// the transcript: a one-line header with the status icon and a summary,
// then a small body that ctrl+o expands. Set the fields freely between
// frames; View notices. Args and Details are compared by content, with the
// same backing array costing O(1), so replace them rather than editing them
// in place. It is not safe for concurrent use, because View fills a cache.
type FileCall struct {
	Tool     string          // Tool is the tool name.
	Args     json.RawMessage // Args are the call's arguments as the model sent them.
	Output   string          // Output is the result Content (the model-facing text); "" while running.
	Details  json.RawMessage // Details is the result Details; nil while running or on error.
	Running  bool            // Running is set until the result arrives.
	Waiting  bool            // Waiting is set while it waits for the user's answer (see ToolCall.Waiting).
	IsError  bool            // IsError marks an error result.
	Expanded bool            // Expanded is toggled by ctrl+o.

	cache   fileCache
	renders int // cache misses, so tests can prove hits do no work
}

// fileKey is every comparable input of View; Args and Details are kept
// beside it in fileCache.
type fileKey struct {
	tool, output                        string
	running, isError, expanded, noColor bool
	waiting                             bool
	width                               int
}

type fileCache struct {
	valid         bool
	key           fileKey
	args, details []byte
	out           string
}

// View renders the call at width cells; an unchanged call at the same width
// returns the previous string without rendering again.
func (c *FileCall) View(width int, th Theme) string {
	k := fileKey{
		tool: c.Tool, output: c.Output, running: c.Running, isError: c.IsError,
		expanded: c.Expanded, noColor: th.NoColor, width: width, waiting: c.Waiting && c.Running,
	}
	// bytes.Equal compares the data pointers first, so unchanged slices
	// cost O(1) however long the arguments of a write are.
	if c.cache.valid && c.cache.key == k && bytes.Equal(c.cache.args, c.Args) && bytes.Equal(c.cache.details, c.Details) {
		return c.cache.out
	}
	c.renders++
	out := c.render(width, th)
	c.cache = fileCache{valid: true, key: k, args: c.Args, details: c.Details, out: out}
	return out
}

// segKind is the style of one piece of a header.
type segKind uint8

const (
	segPlain segKind = iota
	segBold
	segDim
	segAdd
	segDel
	segErr
	segAccent
)

func (th Theme) seg(k segKind, s string) string {
	switch k {
	case segBold:
		return th.paint(th.Bold, s)
	case segDim:
		return th.paint(th.Dim, s)
	case segAdd:
		return th.paint(th.Success, s)
	case segDel, segErr:
		return th.paint(th.Error, s)
	case segAccent:
		return th.paint(th.Accent, s)
	}
	return s
}

// seg is one piece of a header: single-line plain text, its style, and
// whether it may lose its middle when the line is too narrow.
type seg struct {
	text   string
	kind   segKind
	shrink bool
}

// fileArgs are the arguments of the five tools, decoded leniently: the
// tools accept numbers and booleans sent as strings, so the renderer does.
type fileArgs struct {
	path, pattern, glob    string
	offset, limit, context int
	ignoreCase             bool
}

// parseFileArgs decodes raw for tool; ok is false for an unknown tool, for
// arguments that are not an object, or when the tool's required path or
// pattern is missing.
func parseFileArgs(tool string, raw json.RawMessage) (a fileArgs, ok bool) {
	var m map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return a, false
	}
	str := func(name string) (string, bool) {
		v, present := m[name]
		if !present || string(bytes.TrimSpace(v)) == "null" {
			return "", true
		}
		var s string
		err := json.Unmarshal(v, &s)
		return s, err == nil
	}
	num := func(name string) int {
		var f float64
		if json.Unmarshal(m[name], &f) != nil {
			var s string
			if json.Unmarshal(m[name], &s) != nil {
				return 0
			}
			var err error
			if f, err = strconv.ParseFloat(strings.TrimSpace(s), 64); err != nil {
				return 0
			}
		}
		if f < 0 || f > 1<<40 {
			return 0
		}
		return int(f)
	}
	var okPath, okPattern, okGlob bool
	a.path, okPath = str("path")
	a.pattern, okPattern = str("pattern")
	a.glob, okGlob = str("glob")
	if !okPath || !okPattern || !okGlob {
		return a, false
	}
	a.offset, a.limit, a.context = num("offset"), num("limit"), num("context")
	if v, present := m["ignoreCase"]; present {
		var b bool
		if json.Unmarshal(v, &b) != nil {
			var s string
			if json.Unmarshal(v, &s) == nil {
				b, _ = strconv.ParseBool(strings.TrimSpace(s))
			}
		}
		a.ignoreCase = b
	}
	switch tool {
	case tools.ReadName, tools.EditName, tools.WriteName:
		return a, strings.TrimSpace(a.path) != ""
	case tools.GrepName, tools.FindName:
		return a, a.pattern != ""
	}
	return a, false
}

// maxHeadBytes bounds each end of a header piece: no screen shows more,
// and a write's whole content in unparsable arguments would otherwise be
// measured on every render.
const maxHeadBytes = 512

// oneLine makes text safe for a header: no escape sequences or controls,
// no tabs, newlines shown as ↵, and the middle of very long text left out.
func oneLine(s string) string {
	s = sink.Sanitize(s)
	if len(s) > 2*maxHeadBytes+len("…") {
		i, j := maxHeadBytes, len(s)-maxHeadBytes
		for i > 0 && !utf8.RuneStart(s[i]) {
			i--
		}
		for j < len(s) && !utf8.RuneStart(s[j]) {
			j++
		}
		s = s[:i] + "…" + s[j:]
	}
	if strings.ContainsAny(s, "\n\t") {
		s = strings.NewReplacer("\n", "↵", "\t", " ").Replace(s)
	}
	return s
}

// heading is the tool name and its subject (path, pattern), without results.
func heading(tool string, a fileArgs) []seg {
	segs := []seg{{text: oneLine(tool), kind: segBold}, {text: " "}}
	switch tool {
	case tools.ReadName, tools.EditName, tools.WriteName:
		segs = append(segs, seg{text: oneLine(a.path), shrink: true})
	case tools.GrepName:
		if a.ignoreCase {
			segs = append(segs, seg{text: "-i "})
		}
		if a.context > 0 {
			segs = append(segs, seg{text: "-C" + strconv.Itoa(a.context) + " "})
		}
		segs = append(segs, seg{text: `"` + oneLine(a.pattern) + `"`, shrink: true})
		if strings.TrimSpace(a.path) != "" {
			segs = append(segs, seg{text: " in "}, seg{text: oneLine(a.path), shrink: true})
		}
		if strings.TrimSpace(a.glob) != "" {
			segs = append(segs, seg{text: " [" + oneLine(a.glob) + "]"})
		}
	case tools.FindName:
		segs = append(segs, seg{text: oneLine(a.pattern), shrink: true})
		if strings.TrimSpace(a.path) != "" {
			segs = append(segs, seg{text: " in "}, seg{text: oneLine(a.path), shrink: true})
		}
	}
	return segs
}

// genericHeading is the header of a call the renderer does not understand:
// the tool name and its arguments as compact JSON.
func genericHeading(tool string, raw json.RawMessage) []seg {
	name := oneLine(tool)
	if strings.TrimSpace(name) == "" {
		name = "tool"
	}
	var b bytes.Buffer
	text := string(raw)
	if json.Compact(&b, raw) == nil {
		text = b.String()
	}
	segs := []seg{{text: name, kind: segBold}}
	if t := oneLine(strings.TrimSpace(text)); t != "" {
		segs = append(segs, seg{text: " "}, seg{text: t, shrink: true})
	}
	return segs
}

// fileBody is what the header summarises and the body shows.
type fileBody struct {
	stats []seg
	lines []string // logical lines, sanitized
	kind  bodyKind
	n     int // read: lines read, for the collapsed hint
}

type bodyKind uint8

const (
	bodyList bodyKind = iota // grep, find, unknown: first FilePreviewLines
	bodyRead                 // numbered lines, only a hint when collapsed
	bodyDiff                 // a coloured diff, first DiffPreviewLines
	bodyNone
)

func (c *FileCall) render(width int, th Theme) string {
	w := max(width, 1)
	ind := ""
	if w >= indentMin {
		ind = "  "
	}
	bw := w - len(ind)

	a, argsOK := parseFileArgs(c.Tool, c.Args)
	var head []seg
	if argsOK {
		head = heading(c.Tool, a)
	} else {
		head = genericHeading(c.Tool, c.Args)
	}

	switch {
	case c.Running:
		if argsOK && c.Tool == tools.ReadName {
			head = append(head, readArgsRange(a)...)
		}
		out := headerLines(w, th, "○", segAccent, head, nil)
		if c.Waiting {
			out = appendStyled(out, th, th.Warning, ind, WaitingText, bw)
		}
		return strings.Join(out, "\n")
	case c.IsError:
		out := headerLines(w, th, "✗", segErr, head, nil)
		var vis []string
		for _, l := range splitLines(sink.Sanitize(strings.TrimRight(c.Output, "\n"))) {
			vis = wrapLine(vis, l, bw)
		}
		hidden := 0
		// Hiding a single line would cost the hint's line: show it instead.
		if total := len(vis); !c.Expanded && total > ErrorPreviewLines+1 {
			vis, hidden = vis[:ErrorPreviewLines], total-ErrorPreviewLines
		}
		out = appendLines(out, th, ind, vis, segErr)
		if hidden > 0 {
			out = appendStyled(out, th, th.Dim, ind, LaterHint(hidden, ErrorPreviewLines, hidden+ErrorPreviewLines, ExpandAction), bw)
		}
		return strings.Join(out, "\n")
	}

	var b fileBody
	ok := false
	if argsOK {
		b, ok = c.result()
	}
	if !ok {
		// Unknown tool, or a result without usable details: the content
		// as it is, under the best header we have.
		b = fileBody{lines: splitLines(sink.Sanitize(c.Output)), kind: bodyList}
	}
	if b.kind == bodyRead {
		head = append(head, b.stats[0])
		b.stats = b.stats[1:]
	}
	out := headerLines(w, th, "✓", segAdd, head, b.stats)

	switch b.kind {
	case bodyRead:
		if b.n == 0 {
			break
		}
		if !c.Expanded {
			out = appendStyled(out, th, th.Dim, ind, ReadHint(b.n), bw)
			break
		}
		out = appendNumbered(out, th, ind, b.lines, bw)
	case bodyList:
		out = appendPreview(out, th, ind, b.lines, bw, FilePreviewLines, c.Expanded, nil)
	case bodyDiff:
		out = appendPreview(out, th, ind, b.lines, bw, DiffPreviewLines, c.Expanded, diffKind)
	}
	return strings.Join(out, "\n")
}

// readArgsRange is the line range a running read asked for.
func readArgsRange(a fileArgs) []seg {
	from := max(a.offset, 1)
	switch {
	case a.limit > 0:
		return []seg{{text: ":" + strconv.Itoa(from) + "-" + strconv.Itoa(from+a.limit-1)}}
	case a.offset > 1:
		return []seg{{text: ":" + strconv.Itoa(from) + "-"}}
	}
	return nil
}

// result decodes the Details of a successful call; ok is false when they
// are missing or do not decode.
func (c *FileCall) result() (b fileBody, ok bool) {
	if len(bytes.TrimSpace(c.Details)) == 0 {
		return b, false
	}
	content := sink.Sanitize(c.Output)
	switch c.Tool {
	case tools.ReadName:
		var d tools.ReadDetails
		if json.Unmarshal(c.Details, &d) != nil {
			return b, false
		}
		b.kind = bodyRead
		if d.StartLine == 0 {
			b.stats = []seg{{}, {text: " · empty file", kind: segDim}}
			return b, true
		}
		b.n = d.EndLine - d.StartLine + 1
		// The first stat rides on the path; the rest may move down.
		b.stats = []seg{{text: ":" + strconv.Itoa(d.StartLine) + "-" + strconv.Itoa(d.EndLine)}}
		if d.StartLine > 1 || d.EndLine < d.TotalLines {
			b.stats = append(b.stats, seg{text: " (of " + countNoun(d.TotalLines, "line", "lines") + ")", kind: segDim})
		}
		b.lines = splitLines(dropNotice(content, d.NextOffset > 0))
	case tools.GrepName:
		var d tools.GrepDetails
		if json.Unmarshal(c.Details, &d) != nil {
			return b, false
		}
		if d.Matches == 0 {
			b.stats = []seg{{text: " · No matches", kind: segDim}}
			return b, true
		}
		s := countNoun(d.Matches, "match", "matches") + " in " + countNoun(d.Files, "file", "files")
		if d.Truncated {
			s = "first " + s
		}
		b.stats = []seg{{text: " · " + s, kind: segDim}}
		b.lines = splitLines(dropNotice(content, d.Truncated))
	case tools.FindName:
		var d tools.FindDetails
		if json.Unmarshal(c.Details, &d) != nil {
			return b, false
		}
		if d.Count == 0 {
			b.stats = []seg{{text: " · No files", kind: segDim}}
			return b, true
		}
		s := countNoun(d.Count, "file", "files")
		if d.Truncated {
			s = "first " + s
		}
		b.stats = []seg{{text: " · " + s, kind: segDim}}
		b.lines = splitLines(dropNotice(content, d.Truncated))
	case tools.EditName:
		var d tools.EditDetails
		if json.Unmarshal(c.Details, &d) != nil {
			return b, false
		}
		b.kind = bodyDiff
		b.lines = diffBody(sink.Sanitize(d.Diff))
		add, del := 0, 0
		for _, l := range b.lines {
			switch diffKind(l) {
			case segAdd:
				add++
			case segDel:
				del++
			}
		}
		b.stats = []seg{{text: " · ", kind: segDim}, {text: "+" + strconv.Itoa(add), kind: segAdd},
			{text: " "}, {text: "−" + strconv.Itoa(del), kind: segDel}}
		if d.Replacements > 1 {
			b.stats = append(b.stats, seg{text: " in " + strconv.Itoa(d.Replacements) + " places", kind: segDim})
		}
	case tools.WriteName:
		var d tools.WriteDetails
		if json.Unmarshal(c.Details, &d) != nil {
			return b, false
		}
		b.kind = bodyNone
		s := countNoun(d.Bytes, "byte", "bytes") + ", " + countNoun(d.Lines, "line", "lines")
		if d.Created {
			s = "created, " + s
		}
		b.stats = []seg{{text: " · " + s, kind: segDim}}
	default:
		return b, false
	}
	return b, true
}

// dropNotice removes the trailing "[Showing …]" notice (and the blank line
// before it) that tells the model how to continue: the header says it.
func dropNotice(s string, truncated bool) string {
	if !truncated {
		return s
	}
	t := strings.TrimRight(s, "\n")
	i := strings.LastIndexByte(t, '\n')
	last := t[i+1:]
	if i < 0 || !strings.HasPrefix(last, "[Showing ") || !strings.HasSuffix(last, "]") {
		return s
	}
	return strings.TrimSuffix(t[:i], "\n")
}

// diffBody is the lines of a unified diff from its first hunk on: the
// "---"/"+++" file headers are the header's path already.
func diffBody(diff string) []string {
	lines := splitLines(diff)
	for i, l := range lines {
		if strings.HasPrefix(l, "@@") {
			return lines[i:]
		}
	}
	return nil
}

// diffKind is the style of one diff line.
func diffKind(l string) segKind {
	if l == "" {
		return segPlain
	}
	switch l[0] {
	case '+':
		return segAdd
	case '-':
		return segDel
	case '@', '\\':
		return segDim
	}
	return segPlain
}

// headerLines lays out the header: the icon, then main and stats on one
// line, squeezing paths and patterns if needed; when even that does not
// fit, the stats get a line of their own.
func headerLines(w int, th Theme, icon string, iconKind segKind, main, stats []seg) []string {
	if w < 3 {
		// Too narrow for the icon column: the icon alone still tells the state.
		return []string{th.seg(iconKind, fit(icon, w))}
	}
	avail := w - 2
	pre := th.seg(iconKind, icon) + " "
	main = precut(main, avail)
	all := append(append([]seg(nil), main...), stats...)
	if segsWidth(all) <= avail {
		return []string{pre + paintSegs(th, all)}
	}
	if s := shrinkSegs(all, avail, minShrink); segsWidth(s) <= avail {
		return []string{pre + paintSegs(th, s)}
	}
	out := []string{pre + paintSegs(th, clipSegs(shrinkSegs(main, avail, 1), avail))}
	if len(stats) > 0 {
		st := append([]seg(nil), stats...)
		st[0].text = strings.TrimPrefix(strings.TrimPrefix(st[0].text, " · "), " ")
		out = append(out, "  "+paintSegs(th, clipSegs(st, avail)))
	}
	return out
}

// precut bounds the work of measuring long paths and patterns: the line
// shows at most avail cells, so avail*4 bytes of either end are plenty for
// truncateMiddle, whatever the characters.
func precut(segs []seg, avail int) []seg {
	keep := 4 * avail
	out := segs
	for i, s := range segs {
		if !s.shrink || len(s.text) <= 2*keep+len("…") {
			continue
		}
		if &out[0] == &segs[0] {
			out = append([]seg(nil), segs...)
		}
		a, b := keep, len(s.text)-keep
		for a > 0 && !utf8.RuneStart(s.text[a]) {
			a--
		}
		for b < len(s.text) && !utf8.RuneStart(s.text[b]) {
			b++
		}
		out[i].text = s.text[:a] + "…" + s.text[b:]
	}
	return out
}

func segsWidth(segs []seg) int {
	n := 0
	for _, s := range segs {
		n += cells(s.text)
	}
	return n
}

// cells is the width of sanitized single-line text: its length when it is
// ASCII, which headers nearly always are.
func cells(s string) int {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return ansi.StringWidth(s)
		}
	}
	return len(s)
}

func paintSegs(th Theme, segs []seg) string {
	var b strings.Builder
	for _, s := range segs {
		b.WriteString(th.seg(s.kind, s.text))
	}
	return b.String()
}

// shrinkSegs squeezes the shrinkable segments to a common cap of at least
// floor cells, the longest first, so a short path keeps its few cells
// while a long pattern gives up its middle; it returns segs unchanged when
// no such cap makes the line fit avail.
func shrinkSegs(segs []seg, avail, floor int) []seg {
	fixed, widths := 0, make([]int, len(segs))
	for i, s := range segs {
		widths[i] = cells(s.text)
		if !s.shrink {
			fixed += widths[i]
		}
	}
	need := func(c int) int {
		n := fixed
		for i, s := range segs {
			if s.shrink {
				n += min(widths[i], c)
			}
		}
		return n
	}
	c := 0
	for i, s := range segs {
		if s.shrink {
			c = max(c, widths[i])
		}
	}
	if need(c) <= avail {
		return segs
	}
	// need is monotonic in c: find the largest cap that fits.
	lo, hi := floor, c
	if need(lo) > avail {
		return segs
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if need(mid) <= avail {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	out := append([]seg(nil), segs...)
	for i := range out {
		if out[i].shrink && widths[i] > lo {
			out[i].text = truncateMiddle(out[i].text, lo)
		}
	}
	return out
}

// clipSegs cuts segs at avail cells (at least 1), ending in "…" when
// anything is lost.
func clipSegs(segs []seg, avail int) []seg {
	if segsWidth(segs) <= avail {
		return segs
	}
	var out []seg
	left := avail - 1 // room for the "…"
	for _, s := range segs {
		sw := cells(s.text)
		if sw <= left {
			out = append(out, s)
			left -= sw
			continue
		}
		s.text = ansi.Truncate(s.text, left, "") + "…"
		return append(out, s)
	}
	return out
}

// truncateMiddle cuts s to at most n cells, replacing its middle with "…"
// so both the start and the end (a file name) stay visible.
func truncateMiddle(s string, n int) string {
	sw := cells(s)
	if sw <= n {
		return s
	}
	if n < 3 {
		return ansi.Truncate(s, n, "…")
	}
	left := (n - 1) / 2
	right := n - 1 - left
	for ; right >= 0; right-- {
		t := ansi.Truncate(s, left, "") + "…" + ansi.TruncateLeft(s, sw-right, "")
		if cells(t) <= n {
			return t
		}
	}
	return ansi.Truncate(s, n, "…")
}

// appendLines indents and styles visual lines; blank lines stay empty so
// copied text has no trailing blanks.
func appendLines(dst []string, th Theme, ind string, vis []string, k segKind) []string {
	for _, l := range vis {
		if l != "" {
			l = ind + th.seg(k, l)
		}
		dst = append(dst, l)
	}
	return dst
}

// appendPreview adds logical lines styled by kind (nil: plain): all of them
// wrapped when expanded, else the first n each cut to one row, then a hint
// counting the rest. A hint never hides a single line: that line takes no
// more room than the hint.
func appendPreview(dst []string, th Theme, ind string, lines []string, bw, n int, expanded bool, kind func(string) segKind) []string {
	style := func(l string) segKind {
		if kind == nil {
			return segPlain
		}
		return kind(l)
	}
	if expanded || len(lines) <= n+1 {
		for _, l := range lines {
			if kind != nil && signed(l) {
				// Diff lines wrap under their text, keeping the sign column.
				dst = appendLines(dst, th, ind, wrapHanging(l[:1], l[1:], bw), kind(l))
				continue
			}
			dst = appendLines(dst, th, ind, wrapLine(nil, l, bw), style(l))
		}
		return dst
	}
	for _, l := range lines[:n] {
		row := expandTabs(l)
		if kind != nil && signed(l) {
			// Tabs stop where the file has them, after the sign column.
			row = l[:1] + expandTabs(l[1:])
		}
		dst = appendLines(dst, th, ind, []string{fit(ansi.Truncate(row, bw, "…"), bw)}, style(l))
	}
	return appendStyled(dst, th, th.Dim, ind, LaterHint(len(lines)-n, n, len(lines), ExpandAction), bw)
}

// signed reports whether a diff line starts with a sign column: an added,
// removed or context line.
func signed(l string) bool {
	return l != "" && (l[0] == '+' || l[0] == '-' || l[0] == ' ')
}

// wrapHanging wraps text to w cells after the one-cell lead, indenting the
// continuation lines to the same column.
func wrapHanging(lead, text string, w int) []string {
	if w < 2 {
		return wrapLine(nil, lead+text, w)
	}
	vis := wrapLine(nil, text, w-1)
	for i := range vis {
		if i == 0 {
			vis[i] = lead + vis[i]
		} else {
			vis[i] = " " + vis[i]
		}
	}
	if len(vis) == 0 {
		vis = append(vis, lead)
	}
	return vis
}

// appendNumbered renders read's "%6d\t%s" lines as a dim line-number
// column and the text, with wrapped text hanging under the text column.
func appendNumbered(dst []string, th Theme, ind string, lines []string, bw int) []string {
	type numbered struct{ num, text string }
	rows := make([]numbered, 0, len(lines))
	numW := 0
	for _, l := range lines {
		num, text, ok := splitNumbered(l)
		if ok {
			numW = max(numW, len(num))
		}
		rows = append(rows, numbered{num, text})
		if !ok {
			rows[len(rows)-1] = numbered{"", l}
		}
	}
	tw := bw - numW - 2
	if numW == 0 || tw < 8 {
		// Too narrow for a column: the lines as the model read them.
		for _, l := range lines {
			dst = appendLines(dst, th, ind, wrapLine(nil, l, bw), segPlain)
		}
		return dst
	}
	pad := strings.Repeat(" ", numW+2)
	for _, r := range rows {
		if r.num == "" {
			dst = appendLines(dst, th, ind, wrapLine(nil, r.text, bw), segPlain)
			continue
		}
		num := strings.Repeat(" ", numW-len(r.num)) + r.num
		vis := wrapLine(nil, r.text, tw)
		if len(vis) == 0 || (len(vis) == 1 && vis[0] == "") {
			dst = append(dst, ind+th.seg(segDim, num))
			continue
		}
		for i, v := range vis {
			if i == 0 {
				dst = append(dst, ind+th.seg(segDim, num)+"  "+v)
			} else {
				dst = append(dst, ind+pad+v)
			}
		}
	}
	return dst
}

// splitNumbered splits "   12\ttext" into "12" and "text".
func splitNumbered(l string) (num, text string, ok bool) {
	tab := strings.IndexByte(l, '\t')
	if tab < 0 {
		return "", "", false
	}
	num = strings.TrimLeft(l[:tab], " ")
	if num == "" {
		return "", "", false
	}
	for i := 0; i < len(num); i++ {
		if num[i] < '0' || num[i] > '9' {
			return "", "", false
		}
	}
	return num, l[tab+1:], true
}

func countNoun(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

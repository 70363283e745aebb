package tui

import (
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
	"github.com/yuin/goldmark"
	gast "github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/text"
)

// markdown renders assistant answers: goldmark parses (CommonMark + GFM
// tables, strikethrough, task lists, autolinks) and this file draws the
// tree with lipgloss styles. (Glamour did the drawing at first; it doubled
// the binary and the idle RSS through chroma's lexers, see decision 0003.)
type markdown struct {
	noColor    bool
	parser     goldmark.Markdown
	s          mdStyles
	codeStyles codeStyles // fenced code in a known language (highlight.go)
}

type mdStyles struct {
	heading, bold, italic, strike, code, link, dim, quote lipgloss.Style
}

func newMarkdown(noColor bool) *markdown {
	md := &markdown{noColor: noColor, parser: goldmark.New(goldmark.WithExtensions(east.GFM))}
	base := lipgloss.NewStyle()
	if noColor {
		// Layout only: NO_COLOR captures stay free of escape sequences.
		md.s = mdStyles{base, base, base, base, base, base, base, base}
		return md
	}
	md.s = mdStyles{
		heading: base.Bold(true).Foreground(lipgloss.Color("75")),
		bold:    base.Bold(true),
		italic:  base.Italic(true),
		strike:  base.Strikethrough(true),
		code:    base.Foreground(lipgloss.Color("180")),
		link:    base.Underline(true).Foreground(lipgloss.Color("75")),
		dim:     base.Foreground(lipgloss.Color("244")),
		quote:   base.Foreground(lipgloss.Color("244")),
	}
	md.codeStyles = codeStyles{
		plain:   md.s.code,
		keyword: base.Foreground(lipgloss.Color("176")),
		str:     base.Foreground(lipgloss.Color("114")),
		comment: base.Foreground(lipgloss.Color("244")).Italic(true),
		number:  base.Foreground(lipgloss.Color("215")),
	}
	return md
}

// render turns Markdown into lines at most width cells wide. Any prefix of
// a document renders (an answer streams in): an unclosed fence just
// extends to the end.
func (md *markdown) render(src string, width int) string {
	width = max(width, 1)
	source := []byte(strings.ReplaceAll(src, "\t", "    "))
	doc := md.parser.Parser().Parse(text.NewReader(source))
	r := mdRender{md: md, src: source}
	return strings.Join(r.blocks(doc, width), "\n")
}

type mdRender struct {
	md  *markdown
	src []byte
}

// blocks renders the block children of n, a blank line between them
// (none inside a tight list item).
func (r mdRender) blocks(n gast.Node, width int) []string {
	var out []string
	tight := false
	if li, ok := n.(*gast.ListItem); ok {
		if l, ok := li.Parent().(*gast.List); ok {
			tight = l.IsTight
		}
	}
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		lines := r.block(c, width)
		if len(lines) == 0 {
			continue
		}
		if len(out) > 0 && !tight {
			out = append(out, "")
		}
		out = append(out, lines...)
	}
	return out
}

func (r mdRender) block(n gast.Node, width int) []string {
	s := r.md.s
	switch n := n.(type) {
	case *gast.Heading:
		t := r.inline(n)
		if r.md.noColor {
			t = strings.Repeat("#", n.Level) + " " + t
		}
		return wrapLines(s.heading.Render(t), width)
	case *gast.Paragraph, *gast.TextBlock:
		return wrapLines(r.inline(n), width)
	case *gast.FencedCodeBlock, *gast.CodeBlock:
		return r.code(n, width)
	case *gast.List:
		return r.list(n, width)
	case *gast.Blockquote:
		inner := r.blocks(n, max(width-2, 1))
		for i, l := range inner {
			inner[i] = s.quote.Render("│") + " " + l
		}
		return inner
	case *gast.ThematicBreak:
		return []string{s.dim.Render(strings.Repeat("─", min(width, 40)))}
	case *gast.HTMLBlock:
		var lines []string
		for i := 0; i < n.Lines().Len(); i++ {
			seg := n.Lines().At(i)
			lines = append(lines, wrapLines(strings.TrimRight(string(seg.Value(r.src)), "\n"), width)...)
		}
		return lines
	case *extast.Table:
		return r.table(n, width)
	}
	if n.HasChildren() {
		return r.blocks(n, width)
	}
	return nil
}

func (r mdRender) code(n gast.Node, width int) []string {
	var hl *highlighter
	if fc, ok := n.(*gast.FencedCodeBlock); ok && !r.md.noColor {
		hl = newHighlighter(string(fc.Language(r.src)), r.md.codeStyles)
	}
	var lines []string
	for i := 0; i < n.Lines().Len(); i++ {
		seg := n.Lines().At(i)
		l := strings.TrimRight(string(seg.Value(r.src)), "\r\n")
		if hl != nil {
			// Coloured whole, then cut: a token may span a cut.
			for _, w := range hardWrap(hl.line(l), max(width-2, 1)) {
				lines = append(lines, "  "+w)
			}
			continue
		}
		for _, w := range hardWrap(l, max(width-2, 1)) {
			lines = append(lines, "  "+r.md.s.code.Render(w))
		}
	}
	return lines
}

func (r mdRender) list(l *gast.List, width int) []string {
	var out []string
	num := l.Start
	for c := l.FirstChild(); c != nil; c = c.NextSibling() {
		marker := "• "
		if l.IsOrdered() {
			marker = strconv.Itoa(num) + ". "
			num++
		}
		ind := ansi.StringWidth(marker)
		body := r.blocks(c, max(width-ind, 1))
		if len(body) == 0 {
			body = []string{""}
		}
		if !l.IsTight && len(out) > 0 {
			out = append(out, "")
		}
		for i, b := range body {
			lead := strings.Repeat(" ", ind)
			if i == 0 {
				lead = marker
			}
			if b == "" {
				out = append(out, "")
				continue
			}
			out = append(out, lead+b)
		}
	}
	return out
}

// table lays cells out in columns as wide as their widest cell, shrinking
// the widest columns (cells cut with …) when the table is wider than the
// screen.
func (r mdRender) table(t *extast.Table, width int) []string {
	var rows [][]string
	header := -1
	for row := t.FirstChild(); row != nil; row = row.NextSibling() {
		var cells []string
		for c := row.FirstChild(); c != nil; c = c.NextSibling() {
			cells = append(cells, r.inline(c))
		}
		if _, ok := row.(*extast.TableHeader); ok {
			header = len(rows)
		}
		rows = append(rows, cells)
	}
	cols := 0
	for _, row := range rows {
		cols = max(cols, len(row))
	}
	if cols == 0 {
		return nil
	}
	widths := make([]int, cols)
	for _, row := range rows {
		for i, c := range row {
			widths[i] = max(widths[i], ansi.StringWidth(c))
		}
	}
	avail := width - 3*(cols-1) // " │ " between columns
	for total(widths) > avail {
		w := 0
		for i := range widths {
			if widths[i] > widths[w] {
				w = i
			}
		}
		if widths[w] <= 1 {
			break
		}
		widths[w]--
	}
	sep := r.md.s.dim.Render(" │ ")
	align := func(i int) extast.Alignment {
		if i < len(t.Alignments) {
			return t.Alignments[i]
		}
		return extast.AlignNone
	}
	line := func(row []string, style lipgloss.Style) string {
		var b strings.Builder
		for i := range cols {
			c := ""
			if i < len(row) {
				c = row[i]
			}
			if ansi.StringWidth(c) > widths[i] {
				c = ansi.Truncate(c, widths[i], "…")
			}
			if i > 0 {
				b.WriteString(sep)
			}
			gap := widths[i] - ansi.StringWidth(c)
			left := 0 // the column's alignment (`---:` right, `:---:` centre)
			switch align(i) {
			case extast.AlignRight:
				left = gap
			case extast.AlignCenter:
				left = gap / 2
			}
			b.WriteString(strings.Repeat(" ", left))
			b.WriteString(style.Render(c))
			if i < cols-1 {
				b.WriteString(strings.Repeat(" ", gap-left))
			}
		}
		return strings.TrimRight(ansi.Truncate(b.String(), width, ""), " ")
	}
	var out []string
	for ri, row := range rows {
		if ri != header {
			out = append(out, line(row, lipgloss.NewStyle()))
			continue
		}
		out = append(out, line(row, r.md.s.bold))
		rule := make([]string, cols)
		for i, w := range widths {
			rule[i] = strings.Repeat("─", w)
		}
		out = append(out, ansi.Truncate(r.md.s.dim.Render(strings.Join(rule, "─┼─")), width, ""))
	}
	return out
}

func total(ws []int) int {
	t := 0
	for _, w := range ws {
		t += w
	}
	return t
}

// inline renders the inline children of n as one styled string; hard line
// breaks stay as newlines.
func (r mdRender) inline(n gast.Node) string {
	var b strings.Builder
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		r.inlineNode(&b, c)
	}
	return b.String()
}

func (r mdRender) inlineNode(b *strings.Builder, n gast.Node) {
	s := r.md.s
	switch n := n.(type) {
	case *gast.Text:
		b.Write(n.Segment.Value(r.src))
		switch {
		case n.HardLineBreak():
			b.WriteByte('\n')
		case n.SoftLineBreak():
			b.WriteByte(' ')
		}
	case *gast.String:
		b.Write(n.Value)
	case *gast.CodeSpan:
		var t strings.Builder
		for c := n.FirstChild(); c != nil; c = c.NextSibling() {
			if tx, ok := c.(*gast.Text); ok {
				t.Write(tx.Segment.Value(r.src))
			}
		}
		b.WriteString(s.code.Render(t.String()))
	case *gast.Emphasis:
		st := s.italic
		if n.Level >= 2 {
			st = s.bold
		}
		b.WriteString(st.Render(r.inline(n)))
	case *extast.Strikethrough:
		b.WriteString(s.strike.Render(r.inline(n)))
	case *gast.Link:
		label := r.inline(n)
		b.WriteString(s.link.Render(label))
		if dest := string(n.Destination); dest != "" && dest != ansi.Strip(label) {
			b.WriteString(s.dim.Render(" (" + dest + ")"))
		}
	case *gast.AutoLink:
		b.WriteString(s.link.Render(string(n.URL(r.src))))
	case *gast.Image:
		b.WriteString(s.dim.Render("[image: " + r.inline(n) + "]"))
	case *gast.RawHTML:
		for i := 0; i < n.Segments.Len(); i++ {
			seg := n.Segments.At(i)
			b.Write(seg.Value(r.src))
		}
	case *extast.TaskCheckBox:
		if n.IsChecked {
			b.WriteString("[x] ")
		} else {
			b.WriteString("[ ] ")
		}
	default:
		b.WriteString(r.inline(n))
	}
}

// wrapLines soft-wraps styled text to width (words first, long words
// broken) and splits it into lines.
func wrapLines(s string, width int) []string {
	return strings.Split(wrap(s, width), "\n")
}

// hardWrap cuts a code line into width-wide pieces: code keeps its spaces.
func hardWrap(l string, width int) []string {
	if ansi.StringWidth(l) <= width {
		return []string{l}
	}
	return strings.Split(ansi.Hardwrap(l, width, true), "\n")
}

// liveBlocks renders a streaming answer block by block (blocks are split at
// blank lines outside code fences) and reuses the blocks already rendered,
// so each update costs only the block being written instead of the whole
// answer. cache maps a block's source to its rendering at this width; the
// finished answer is rendered whole once, which also joins what the split
// may have set apart (a loose list).
func (md *markdown) liveBlocks(text string, width int, cache map[string]string) string {
	var out []string
	for _, blk := range splitBlocks(text) {
		r, ok := cache[blk]
		if !ok {
			r = md.render(blk, width)
			cache[blk] = r
		}
		if r != "" {
			out = append(out, r)
		}
	}
	return strings.Join(out, "\n\n")
}

// splitBlocks cuts Markdown at blank lines that are not inside a fenced
// code block.
func splitBlocks(text string) []string {
	var blocks []string
	var cur []string
	fence := ""
	flush := func() {
		if len(cur) > 0 {
			blocks = append(blocks, strings.Join(cur, "\n"))
			cur = cur[:0]
		}
	}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			if strings.HasPrefix(t, fence) {
				fence = ""
			}
		case strings.HasPrefix(t, "```"):
			fence = "```"
		case strings.HasPrefix(t, "~~~"):
			fence = "~~~"
		case t == "":
			flush()
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return blocks
}

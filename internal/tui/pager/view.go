package pager

import (
	"fmt"
	"strconv"
	"strings"

	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"
)

// Styles are the looks the pager draws with; the TUI gives its own.
type Styles struct {
	// Title is the header's title; Dim the header's position, the footer's
	// help, the gutter and the decoded control characters.
	Title, Dim lipgloss.Style
	// Warning and Error are the footer's messages (a wrapped search, a
	// read error).
	Warning, Error lipgloss.Style
	// NoColor leaves out the command's own colours and shows search
	// matches in reverse video.
	NoColor bool
}

// matchStyle highlights search matches: reverse video without colour
// (an attribute, not a colour, like the selected block's header), black on
// yellow with it. The match line is also marked in the gutter.
func matchStyle(noColor bool) lipgloss.Style {
	if noColor {
		return lipgloss.NewStyle().Reverse(true)
	}
	return lipgloss.NewStyle().Foreground(lipgloss.Color("0")).Background(lipgloss.Color("11"))
}

// View draws the pager: exactly height lines, each at most width cells.
// It reads the frame the last Update (or SetSize) laid out and changes
// nothing. The window is the size last given to SetSize (the pager gets
// every tea.WindowSizeMsg); another size gets that layout cut or padded.
func (p *Pager) View(width, height int, st Styles) string {
	if height <= 0 {
		return ""
	}
	if width <= 0 {
		return strings.Repeat("\n", height-1)
	}
	out := make([]string, 0, p.height)
	if p.height >= 2 {
		out = append(out, p.header(st))
	}
	out = append(out, p.body(st)...)
	out = append(out, p.footer(st))
	if width == p.width && height == p.height {
		return strings.Join(out, "\n")
	}
	for len(out) < height {
		out = append(out, "")
	}
	out = out[:height]
	for i := range out {
		out[i] = fit(out[i], width)
	}
	return strings.Join(out, "\n")
}

// fit pads or cuts s (styled) to exactly w columns.
func fit(s string, w int) string {
	sw := ansi.StringWidth(s)
	if sw > w {
		s = ansi.Truncate(s, w, "")
		sw = ansi.StringWidth(s)
	}
	return s + strings.Repeat(" ", max(w-sw, 0))
}

func (p *Pager) header(st Styles) string {
	w, lastLine := p.width, p.fr.last
	var right string
	if p.idx.n == 0 {
		right = "(empty)"
	} else {
		right = fmt.Sprintf("line %d–%d of %d  %d%%", p.top+1, lastLine+1, p.idx.n, (lastLine+1)*100/p.idx.n)
	}
	if p.wrap {
		right += "  wrap"
	} else if p.xOff > 0 {
		right += fmt.Sprintf("  col %d", p.xOff+1)
	}
	rw := ansi.StringWidth(right)
	if rw+2 > w {
		return fit(st.Dim.Render(sanitize(right, w)), w)
	}
	title := truncText(p.title, w-rw-2)
	gap := w - ansi.StringWidth(title) - rw
	return st.Title.Render(title) + strings.Repeat(" ", max(gap, 0)) + st.Dim.Render(right)
}

func (p *Pager) footer(st Styles) string {
	w := p.width
	switch {
	case p.prompt:
		s := "/" + sanitize(p.input, 1<<20) + "█"
		if sw := ansi.StringWidth(s); sw > w {
			s = ansi.TruncateLeft(s, sw-w+1, "…")
		}
		return fit(s, w)
	case p.msg != "":
		style := st.Warning
		if p.msgErr {
			style = st.Error
		}
		return fit(style.Render(truncText(p.msg, w)), w)
	}
	return fit(st.Dim.Render(truncText(p.keys.help(), w)), w)
}

// truncText is s sanitised and cut to w columns with an ellipsis.
func truncText(s string, w int) string {
	return ansi.Truncate(sanitize(s, 1<<20), w, "…")
}

// body draws the frame's rows, bodyHeight of them.
func (p *Pager) body(st Styles) []string {
	bodyH := p.bodyHeight()
	rows := make([]string, 0, bodyH)
	if bodyH == 0 {
		return rows
	}
	if p.idx.n == 0 {
		rows = append(rows, fit(st.Dim.Render("(empty)"), p.width))
		for len(rows) < bodyH {
			rows = append(rows, strings.Repeat(" ", p.width))
		}
		return rows
	}
	gw, tw := p.gutterWidth(), p.textWidth()
	r := rowRenderer{match: newWrapStyle(matchStyle(st.NoColor)), dim: newWrapStyle(st.Dim), noColor: st.NoColor}
	var nums, marks []string // the gutter, styled at once below
	var check []bool         // rows whose width is worth checking
	for _, fr := range p.fr.rows {
		num, mark := "", " "
		if fr.first {
			num = strconv.Itoa(fr.line + 1)
			if fr.line == p.matchLine {
				mark = "▸"
			}
		}
		d := &p.fr.lines[fr.li]
		nums = append(nums, strings.Repeat(" ", max(gw-1-len(num), 0))+num)
		marks = append(marks, mark)
		rows = append(rows, r.render(d, fr.a, fr.b, fr.col, fr.x0, tw))
		check = append(check, d.unusual)
	}
	if gw > 0 {
		styled := strings.Split(st.Dim.Render(strings.Join(nums, "\n")), "\n")
		for i := range rows {
			g := nums[i]
			if len(styled) == len(rows) {
				g = styled[i]
			}
			rows[i] = g + marks[i] + rows[i]
		}
	}
	for i, row := range rows { // a guard against width disagreements
		if check[i] && ansi.StringWidth(row) > p.width {
			rows[i] = ansi.Truncate(row, p.width, "")
		}
	}
	for len(rows) < bodyH {
		rows = append(rows, strings.Repeat(" ", p.width))
	}
	return rows
}

// rowRenderer draws rows of decoded cells; noColor leaves out the
// command's colours.
type rowRenderer struct {
	match, dim wrapStyle
	noColor    bool
	sb         strings.Builder
}

// wrapStyle is a style as the codes around the text, worked out once: a
// row has many short segments, and rendering each through lipgloss is slow.
type wrapStyle struct {
	style     lipgloss.Style
	pre, post string
	ok        bool
}

func newWrapStyle(st lipgloss.Style) wrapStyle {
	w := wrapStyle{style: st}
	s := st.Render("x")
	if i := strings.IndexByte(s, 'x'); i >= 0 && ansi.Strip(s) == "x" {
		w.pre, w.post, w.ok = s[:i], s[i+1:], true
	}
	return w
}

func (w wrapStyle) write(sb *strings.Builder, text []byte) {
	if !w.ok {
		sb.WriteString(w.style.Render(string(text)))
		return
	}
	sb.WriteString(w.pre)
	sb.Write(text)
	sb.WriteString(w.post)
}

// render draws the cells [a, b) of d (cell a starting at column col) that
// fall in columns [x0, x0+w), padded to w columns.
func (r *rowRenderer) render(d *dline, a, b, col, x0, w int) string {
	r.sb.Reset()
	var seg []byte
	var segKind uint8
	var segSty uint16
	flush := func() {
		switch {
		case len(seg) == 0:
		case segKind&cellMatch != 0:
			r.match.write(&r.sb, seg)
		case segKind&(cellCtrl|cellNote) != 0:
			r.dim.write(&r.sb, seg)
		case segSty != 0:
			r.sb.WriteString(d.styles[segSty])
			r.sb.Write(seg)
			r.sb.WriteString("\x1b[m")
		default:
			r.sb.Write(seg)
		}
		seg = seg[:0]
	}
	out := 0
	for k := a; k < b; k++ {
		c := d.cells[k]
		cw := int(c.w)
		start, end := col, col+cw
		col = end
		if end <= x0 && cw > 0 || start < x0 && cw == 0 {
			continue
		}
		if start >= x0+w {
			break
		}
		kind := c.kind & (cellMatch | cellCtrl | cellNote)
		sty := c.sty
		if kind != 0 || r.noColor {
			sty = 0 // a match or a note has its own look
		}
		if kind != segKind || sty != segSty {
			flush()
			segKind, segSty = kind, sty
		}
		if start < x0 || end > x0+w { // a wide cell cut by an edge
			n := min(end, x0+w) - max(start, x0)
			seg = append(seg, strings.Repeat(" ", n)...)
			out += n
			continue
		}
		seg = append(seg, d.text[c.off:d.cellEnd(k)]...)
		out += cw
	}
	flush()
	r.sb.WriteString(strings.Repeat(" ", max(w-out, 0)))
	return r.sb.String()
}

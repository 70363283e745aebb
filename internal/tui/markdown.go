package tui

import (
	"reflect"
	"strings"

	"charm.land/glamour/v2"
	gansi "charm.land/glamour/v2/ansi"
	gstyles "charm.land/glamour/v2/styles"
	"github.com/charmbracelet/x/ansi"
)

// markdown renders assistant answers with glamour. Renderers are built per
// width (building one parses a style sheet) and kept: a session sees only a
// handful of widths.
type markdown struct {
	noColor   bool
	renderers map[int]*glamour.TermRenderer
}

func newMarkdown(noColor bool) *markdown {
	return &markdown{noColor: noColor, renderers: map[int]*glamour.TermRenderer{}}
}

func (md *markdown) renderer(width int) *glamour.TermRenderer {
	if r := md.renderers[width]; r != nil {
		return r
	}
	cfg := gstyles.DarkStyleConfig
	if md.noColor {
		// NO_COLOR keeps the layout and emphasis (bold headings, quote
		// bars) but drops every colour, syntax highlighting included.
		stripColors(reflect.ValueOf(&cfg).Elem())
		cfg.CodeBlock.Chroma = nil
		cfg.CodeBlock.Theme = ""
	}
	zero := uint(0)
	// The transcript has its own margins; plain text keeps the terminal's
	// own colour so light themes stay readable.
	cfg.Document = gansi.StyleBlock{Margin: &zero}
	r, err := glamour.NewTermRenderer(glamour.WithStyles(cfg), glamour.WithWordWrap(width))
	if err != nil {
		return nil
	}
	md.renderers[width] = r
	return r
}

// stripColors clears every Color and BackgroundColor field of the struct v
// and its embedded and nested structs. It does not follow pointers: they are
// shared with glamour's global style sheets.
func stripColors(v reflect.Value) {
	switch v.Kind() {
	case reflect.Struct:
		t := v.Type()
		for i := range v.NumField() {
			f := v.Field(i)
			if !f.CanSet() {
				continue
			}
			if name := t.Field(i).Name; (name == "Color" || name == "BackgroundColor") && f.Kind() == reflect.Pointer {
				f.SetZero()
				continue
			}
			stripColors(f)
		}
	}
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

// render turns Markdown into at most width-wide lines: glamour pads every
// line to the wrap width with one escape sequence per space, so the padding
// is cut off, blank lines at both ends are dropped and runs of blank lines
// are folded into one. Any prefix of a document renders (an answer streams
// in), since an unclosed fence just extends to the end.
func (md *markdown) render(text string, width int) string {
	width = max(width, 1)
	// Tabs have no fixed width on screen; code blocks get four columns.
	text = strings.ReplaceAll(text, "\t", "    ")
	r := md.renderer(width)
	var out string
	if r != nil {
		if s, err := r.Render(text); err == nil {
			out = s
		}
	}
	if out == "" {
		out = wrap(text, width)
	}
	lines := strings.Split(out, "\n")
	kept := lines[:0]
	blank := true // drops leading blank lines
	for _, l := range lines {
		plain := strings.TrimRight(ansi.Strip(l), " \u00a0")
		if plain == "" {
			if !blank {
				kept = append(kept, "")
			}
			blank = true
			continue
		}
		blank = false
		w := ansi.StringWidth(plain)
		if ansi.StringWidth(l) > w {
			l = ansi.Truncate(l, w, "")
			if strings.Contains(l, "\x1b[") {
				l += "\x1b[m"
			}
		}
		kept = append(kept, l)
	}
	for len(kept) > 0 && kept[len(kept)-1] == "" {
		kept = kept[:len(kept)-1]
	}
	return strings.Join(kept, "\n")
}

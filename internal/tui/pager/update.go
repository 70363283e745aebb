package pager

import (
	"strings"
	"unicode/utf8"

	tea "charm.land/bubbletea/v2"
)

// Update handles a key, mouse wheel, paste or window size; closed reports
// that the pager wants to be closed. Every read the next View needs is
// done here (see layout).
func (p *Pager) Update(msg tea.Msg) (closed bool) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		p.SetSize(msg.Width, msg.Height)
		return false
	case tea.KeyPressMsg:
		if p.prompt {
			p.promptKey(msg)
		} else if p.key(msg) {
			return true
		}
	case tea.PasteMsg:
		if !p.prompt {
			return false
		}
		p.input += promptText(msg.Content)
	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			p.scroll(-wheelLines)
		case tea.MouseWheelDown:
			p.scroll(wheelLines)
		case tea.MouseWheelLeft:
			p.xOff = max(p.xOff-wheelLines*2, 0)
		case tea.MouseWheelRight:
			p.scrollRight(wheelLines * 2)
		}
	default:
		return false
	}
	p.layout()
	return false
}

func (p *Pager) key(msg tea.KeyPressMsg) (closed bool) {
	p.msg, p.msgErr = "", false
	page := p.pageHeight()
	switch k, pk := keyName(msg.String()), p.keys.Pager; {
	case is(k, pk.Close):
		return true
	case is(k, pk.Up):
		p.scroll(-1)
	case is(k, pk.Down):
		p.scroll(1)
	case is(k, pk.PageUp):
		p.scroll(-page)
	case is(k, pk.PageDown):
		p.scroll(page)
	case is(k, pk.HalfUp):
		p.scroll(-max(page/2, 1))
	case is(k, pk.HalfDown):
		p.scroll(max(page/2, 1))
	case is(k, pk.Top):
		p.top, p.topRow = 0, 0
	case is(k, pk.Bottom):
		p.top, p.topRow = p.endPos()
	case is(k, pk.Left):
		p.xOff = max(p.xOff-max(p.textWidth()/2, 1), 0)
	case is(k, pk.Right):
		p.scrollRight(max(p.textWidth()/2, 1))
	case is(k, pk.Column0):
		p.xOff = 0
	case is(k, pk.Wrap):
		p.wrap = !p.wrap
		p.topRow = 0
		p.clamp()
	case is(k, pk.Search):
		p.prompt, p.input = true, ""
	case is(k, pk.Next):
		p.next(false)
	case is(k, pk.Prev):
		p.next(true)
	}
	return false
}

func (p *Pager) promptKey(msg tea.KeyPressMsg) {
	switch k, qk := keyName(msg.String()), p.keys.Prompt; {
	case is(k, qk.Cancel):
		p.prompt = false
	case is(k, qk.Submit):
		p.prompt = false
		q := p.input
		if q == "" {
			if p.search == nil {
				return
			}
			q = p.search.query
		}
		p.search = newMatcher(q)
		p.matchLine = -1
		p.find(p.top, false)
	case is(k, qk.Erase):
		if p.input == "" {
			p.prompt = false
			return
		}
		_, sz := utf8.DecodeLastRuneInString(p.input)
		p.input = p.input[:len(p.input)-sz]
	case is(k, qk.Clear):
		p.input = ""
	default:
		if msg.Text != "" && msg.Mod&(tea.ModCtrl|tea.ModAlt) == 0 {
			p.input += promptText(msg.Text)
		}
	}
}

// promptText is typed or pasted text for the prompt: controls become spaces.
func promptText(s string) string {
	s = strings.ReplaceAll(s, "\r\n", " ")
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || hiddenRune(r) || r == utf8.RuneError {
			return ' '
		}
		return r
	}, s)
}

// next goes to the next (or previous) match of the last search.
func (p *Pager) next(back bool) {
	if p.search == nil {
		p.msg = "No previous search"
		return
	}
	from := p.top
	visible := p.matchLine >= p.top && p.matchLine <= p.lastVisible()
	switch {
	case visible && !back:
		from = p.matchLine + 1
	case visible && back:
		from = p.matchLine - 1
	case back:
		from = p.top - 1
	}
	p.find(from, back)
}

// find searches from line from (inclusive) forward or backward, wrapping
// around the file, and shows the match.
func (p *Pager) find(from int, back bool) {
	n := p.idx.n
	if n == 0 || p.search.query == "" {
		p.msg = "Pattern not found: " + p.search.query
		return
	}
	from = ((from % n) + n) % n
	var line int
	var err error
	wrapped := false
	if !back {
		line, err = p.scan(from, n, false)
		if line < 0 && err == nil && from > 0 {
			line, err = p.scan(0, from, false)
			wrapped = true
		}
	} else {
		line, err = p.scanBack(0, from+1)
		if line < 0 && err == nil && from+1 < n {
			line, err = p.scanBack(from+1, n)
			wrapped = true
		}
	}
	switch {
	case err != nil:
		p.msg, p.msgErr = "search: "+err.Error(), true
		return
	case line < 0:
		p.msg, p.matchLine = "Pattern not found: "+p.search.query, -1
		return
	}
	if wrapped {
		if back {
			p.msg = "search hit TOP, continuing at BOTTOM"
		} else {
			p.msg = "search hit BOTTOM, continuing at TOP"
		}
	}
	p.matchLine = line
	p.reveal(line)
}

// reveal scrolls so that line (the match) is on screen, its match too.
func (p *Pager) reveal(line int) {
	if line < p.top || line > p.lastVisible() || (line == p.top && p.topRow > 0) {
		p.top, p.topRow = line, 0
		p.scroll(-min(p.pageHeight()/4, 5))
		p.clamp()
	}
	if p.wrap {
		return
	}
	w := p.textWidth()
	p.decodeLine(&p.d, line, 0, 1<<30)
	col := 0
	for _, c := range p.d.cells {
		if c.kind&cellMatch != 0 {
			if col < p.xOff || col >= p.xOff+w {
				p.xOff = max(col-w/4, 0)
			}
			return
		}
		col += int(c.w)
	}
}

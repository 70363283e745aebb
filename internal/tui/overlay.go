package tui

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/pty"
)

// overlayChrome is the rows the overlay spends around the PTY screen: the
// two border rows, the header and the footer.
const overlayChrome = 4

// overlaySize is the overlay's outer size for a window: the full width and
// about 80% of the height, anchored at the bottom.
func overlaySize(width, height int) (w, h int) {
	return width, max(height*4/5, overlayChrome+1)
}

// ptyInnerSize is the PTY size that fits the overlay exactly.
func ptyInnerSize(width, height int) (cols, rows int) {
	w, h := overlaySize(width, height)
	return max(w-2, 1), max(h-overlayChrome, 1)
}

// terminalHost is the bash tool's TerminalUI: it is called from the tool's
// goroutine, so it only reads atomics and hands the session to the program
// through messages.
type terminalHost struct {
	width, height atomic.Int64
	send          func(tea.Msg)
	closed        atomic.Bool

	mu       sync.Mutex
	sessions map[*pty.Session]struct{} // running, killed on quit
}

func newTerminalHost(send func(tea.Msg)) *terminalHost {
	h := &terminalHost{send: send, sessions: map[*pty.Session]struct{}{}}
	h.width.Store(80)
	h.height.Store(24)
	return h
}

func (h *terminalHost) setWindow(w, ht int) {
	h.width.Store(int64(w))
	h.height.Store(int64(ht))
}

// PTYSize implements bash.TerminalUI.
func (h *terminalHost) PTYSize() (cols, rows int) {
	return ptyInnerSize(int(h.width.Load()), int(h.height.Load()))
}

// AttachPTY implements bash.TerminalUI. It returns at once; a goroutine
// tells the program about the session and then about each screen change
// (at most one redraw per frame) until the session ends.
func (h *terminalHost) AttachPTY(s *pty.Session, command string) {
	h.mu.Lock()
	if h.closed.Load() {
		h.mu.Unlock()
		s.Kill() // the UI is gone: nobody could see or stop the program
		return
	}
	h.sessions[s] = struct{}{}
	h.mu.Unlock()
	go func() {
		defer func() {
			h.mu.Lock()
			delete(h.sessions, s)
			h.mu.Unlock()
		}()
		watchTerminal(h.send, s, command)
	}()
}

// watchTerminal tells the program that t takes the screen, then about each
// screen change (at most one redraw per frame) until t ends, and then that
// it ended. It runs on its own goroutine.
func watchTerminal(send func(tea.Msg), t terminal, command string) {
	send(ptyAttachMsg{s: t, command: command})
	changed := t.Screen().Changed()
	for {
		select {
		case <-t.Done():
			send(ptyDoneMsg{s: t})
			return
		case <-changed:
			send(ptyChangedMsg{s: t})
			select {
			case <-t.Done():
			case <-time.After(frameInterval):
			}
		}
	}
}

// killAll ends every PTY session still running and refuses new ones; used on
// quit.
func (h *terminalHost) killAll() {
	h.mu.Lock()
	h.closed.Store(true)
	ss := make([]*pty.Session, 0, len(h.sessions))
	for s := range h.sessions {
		ss = append(ss, s)
	}
	h.mu.Unlock()
	for _, s := range ss {
		s.Kill()
	}
	for _, s := range ss {
		select {
		case <-s.Done():
		case <-time.After(5 * time.Second):
		}
	}
}

// terminal is a program on a pseudo-terminal that the overlay shows and
// types into: the model's PTY command (*pty.Session) or the user's `!`
// command on the session shell's terminal (bangTerminal).
// backgrounder is a terminal whose command can become a job (a `!`
// command on the session's terminal): the overlay's
// keys.Overlay.Background moves it.
type backgrounder interface{ background() }

type terminal interface {
	// Screen is the emulated terminal; not nil once the program runs.
	Screen() *pty.Screen
	// Write types keys (as a terminal sends them) into the program.
	Write(p []byte) (int, error)
	// Resize sets the program's terminal size.
	Resize(cols, rows int)
	// Kill ends the program (the command is cancelled).
	Kill()
	// Done is closed when the command has ended.
	Done() <-chan struct{}
}

// ended reports whether t's command has ended.
func ended(t terminal) bool {
	select {
	case <-t.Done():
		return true
	default:
		return false
	}
}

type (
	ptyAttachMsg struct {
		s       terminal
		command string
	}
	ptyChangedMsg struct{ s terminal }
	ptyDoneMsg    struct{ s terminal }
)

// overlay is the PTY console drawn over the transcript.
type overlay struct {
	s       terminal
	command string
	killed  bool
}

// fullScreen reports whether the program is on the alternate screen: esc
// is then its key, and only keys.Overlay.KillFull kills it (spec §3).
func (o *overlay) fullScreen() bool {
	scr := o.s.Screen()
	return scr != nil && scr.AltScreen()
}

// killKey is the key that kills the program now.
func (o *overlay) killKey() key.Binding {
	if o.fullScreen() {
		return keys.Overlay.KillFull
	}
	return keys.Overlay.Kill
}

// waiter is a terminal that reports how its program ended.
type waiter interface{ Wait() pty.Result }

// badge is the status shown in the header.
func (o *overlay) badge(st *styles) string {
	text, style := "running", st.badgeRunning
	w, reports := o.s.(waiter)
	switch {
	case ended(o.s) && !reports:
		text, style = "ended", st.badgeDone
		if o.killed {
			text, style = "killed", st.badgeFailed
		}
	case ended(o.s):
		r := w.Wait()
		switch {
		case r.TimedOut:
			text, style = "timed out", st.badgeFailed
		case r.Cancelled:
			text, style = "killed", st.badgeFailed
		case r.ExitCode != nil:
			text, style = fmt.Sprintf("exit %d", *r.ExitCode), st.badgeDone
			if *r.ExitCode != 0 {
				style = st.badgeFailed
			}
		}
	default:
		if o.killed {
			text, style = "killed", st.badgeFailed
		}
	}
	return style.Render(text)
}

// box renders the overlay box at width × height (outer size) and the
// cursor position inside it (-1 when hidden).
func (o *overlay) box(width, height int, st *styles) (string, int, int) {
	_, bg := o.s.(backgrounder)
	return terminalBox(width, height, "$ "+o.command, o.badge(st), overlayFooterText(o.fullScreen(), bg), o.s.Screen(), st)
}

// update implements layer: the program owns the keyboard; only the kill
// key stays ours (esc for a plain program; on the alternate screen esc is
// the program's, and KillFull kills: spec §3); a paste goes to the program
// too. The overlay leaves the stack when its program's command ends.
func (o *overlay) update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if k := keyName(msg.String()); is(k, keys.Overlay.KillFull) || (!o.fullScreen() && is(k, keys.Overlay.Kill)) {
			o.killed = true
			o.s.Kill()
			return nil, nil
		}
		if _, ok := o.s.(backgrounder); ok && !o.fullScreen() && is(keyName(msg.String()), keys.Overlay.Background) {
			return moveToBackground{}, nil // the command's end closes the overlay
		}
		if b := encodeKey(msg.Key(), appCursor(o.s.Screen())); len(b) > 0 {
			_, _ = o.s.Write(b)
		}
	case tea.PasteMsg:
		_, _ = o.s.Write([]byte(msg.Content))
	case tea.MouseWheelMsg:
		return passOn{}, nil // the transcript above the box scrolls
	case tea.WindowSizeMsg:
		o.s.Resize(ptyInnerSize(msg.Width, msg.Height))
	case ptyDoneMsg:
		if msg.s == o.s {
			return closeLayer{}, nil
		}
	}
	return nil, nil
}

// view implements layer: the box at the bottom of the window.
func (o *overlay) view(width, height int, st *styles) surface {
	return bottomBox(width, height, st, o.box)
}

// covers implements layer: the top of the transcript stays visible.
func (o *overlay) covers() bool { return false }

// stop implements stopper: quitting kills the program.
func (o *overlay) stop() { o.s.Kill() }

// terminalBox draws a terminal's screen in a bordered box of width × height
// (outer size): a header with title and badge, the screen, a footer. It
// returns the box and the cursor position inside it (-1 when hidden). The
// PTY overlay and an attached job share it.
func terminalBox(width, height int, title, badge, footerText string, scr *pty.Screen, st *styles) (string, int, int) {
	innerW, innerH := max(width-2, 1), max(height-overlayChrome, 1)
	title = strings.ReplaceAll(title, "\n", " ")
	room := innerW - lipgloss.Width(badge) - 1
	title = ansi.Truncate(title, max(room, 0), "…")
	header := st.overlayTitle.Render(title) + strings.Repeat(" ", max(innerW-lipgloss.Width(title)-lipgloss.Width(badge), 0)) + badge

	rows := strings.Split(scr.Render(), "\n")
	body := make([]string, innerH)
	for i := range body {
		line := ""
		if i < len(rows) {
			line = ansi.Truncate(rows[i], innerW, "")
		}
		if pad := innerW - ansi.StringWidth(line); pad > 0 {
			line += strings.Repeat(" ", pad)
		}
		body[i] = line
	}
	footer := st.overlayFooter.Render(ansi.Truncate(footerText, innerW, "…"))
	content := header + "\n" + strings.Join(body, "\n") + "\n" + footer
	box := st.overlay.Width(width).Height(height).Render(content)

	cx, cy, visible := scr.Cursor()
	if !visible || cx >= innerW || cy >= innerH {
		return box, -1, -1
	}
	// +1 for the border, +1 more row for the header.
	return box, cx + 1, cy + 2
}

// encodeKey turns a key press into the bytes xterm sends for it, for a
// program whose cursor keys are in application mode when appCursor
// (Session.Write leaves these bytes as they are).
func encodeKey(k tea.Key, appCursor bool) []byte {
	return pty.AppendKey(nil, ptyKey(k), appCursor)
}

// ptyKey maps a Bubble Tea key press onto pty's: the named keys by table,
// F1–F12 in a run, the modifiers xterm can express and caps lock, which
// decides the case of a key that comes without text (alt+a).
func ptyKey(k tea.Key) pty.Key {
	pk := pty.Key{Code: k.Code, Shifted: k.ShiftedCode, Text: k.Text}
	switch c, named := ptyKeys[k.Code]; {
	case named:
		pk.Code = c
	case k.Code >= tea.KeyF1 && k.Code <= tea.KeyF12:
		pk.Code = pty.KeyF1 + k.Code - tea.KeyF1
	case k.Code >= tea.KeyExtended:
		pk.Code = -1 // no xterm key: only its text, if any, is sent
	}
	for _, m := range ptyMods {
		if k.Mod&m.tea != 0 {
			pk.Mod |= m.pty
		}
	}
	return pk
}

// ptyKeys maps Bubble Tea's named keys to pty's; a keypad key is the
// ordinary key it types, as pty does not follow the keypad mode.
var ptyKeys = map[rune]rune{
	tea.KeyEnter: pty.KeyEnter, tea.KeyTab: pty.KeyTab, tea.KeyBackspace: pty.KeyBackspace, tea.KeyEscape: pty.KeyEscape,
	tea.KeyUp: pty.KeyUp, tea.KeyDown: pty.KeyDown, tea.KeyRight: pty.KeyRight, tea.KeyLeft: pty.KeyLeft,
	tea.KeyHome: pty.KeyHome, tea.KeyEnd: pty.KeyEnd, tea.KeyBegin: pty.KeyBegin,
	tea.KeyInsert: pty.KeyInsert, tea.KeyDelete: pty.KeyDelete, tea.KeyPgUp: pty.KeyPageUp, tea.KeyPgDown: pty.KeyPageDown,
	tea.KeyKpEnter: pty.KeyEnter, tea.KeyKpEqual: '=', tea.KeyKpMultiply: '*', tea.KeyKpPlus: '+',
	tea.KeyKpComma: ',', tea.KeyKpSep: ',', tea.KeyKpMinus: '-', tea.KeyKpDecimal: '.', tea.KeyKpDivide: '/',
	tea.KeyKp0: '0', tea.KeyKp1: '1', tea.KeyKp2: '2', tea.KeyKp3: '3', tea.KeyKp4: '4',
	tea.KeyKp5: '5', tea.KeyKp6: '6', tea.KeyKp7: '7', tea.KeyKp8: '8', tea.KeyKp9: '9',
	tea.KeyKpUp: pty.KeyUp, tea.KeyKpDown: pty.KeyDown, tea.KeyKpLeft: pty.KeyLeft, tea.KeyKpRight: pty.KeyRight,
	tea.KeyKpHome: pty.KeyHome, tea.KeyKpEnd: pty.KeyEnd, tea.KeyKpBegin: pty.KeyBegin,
	tea.KeyKpInsert: pty.KeyInsert, tea.KeyKpDelete: pty.KeyDelete, tea.KeyKpPgUp: pty.KeyPageUp, tea.KeyKpPgDown: pty.KeyPageDown,
}

// ptyMods pairs Bubble Tea's modifier bits with pty's.
var ptyMods = [...]struct {
	tea tea.KeyMod
	pty pty.KeyMod
}{{tea.ModShift, pty.ModShift}, {tea.ModAlt, pty.ModAlt}, {tea.ModCtrl, pty.ModCtrl}, {tea.ModCapsLock, pty.ModCapsLock}}

// appCursor reports the program's cursor key mode (DECCKM); a program not
// started yet has the default, normal mode.
func appCursor(scr *pty.Screen) bool { return scr != nil && scr.AppCursor() }

package tui

// Mouse capture is off by default: with mouse reporting on, the terminal
// sends drags to the program and its own selection (drag to select, copy)
// stops working in most terminals. The user turns capture on with the
// Mouse key or /mouse when clicks (select a block) and the wheel (scroll)
// are worth more than selecting text, and off again the same way.

// mouseCommand toggles mouse capture when sent from the editor.
const mouseCommand = "/mouse"

// toggleMouse switches mouse capture and says what the mouse does now.
func (m *model) toggleMouse() {
	m.mouse = !m.mouse
	toggle := name(keys.Main.Mouse) + " or " + mouseCommand
	if m.mouse {
		m.flash = "mouse on: a click selects, the wheel scrolls · " + toggle + " gives text selection back to the terminal"
	} else {
		m.flash = "mouse off: the terminal selects and copies text · " + toggle + " for clicks and the wheel"
	}
}

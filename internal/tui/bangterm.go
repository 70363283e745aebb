package tui

import (
	"sync"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/pty"
)

// bangTerminal is the terminal of the user's `!` command: the command runs
// in the session's persistent shell with its output on the shell's
// pseudo-terminal (bash.TerminalView), so vim, python3, less and top work
// while `cd` and exports persist. Its output streams into the `!` block;
// the overlay opens on it only when the program takes the screen or waits
// for keys (OnTakeover).
type bangTerminal struct {
	view *bash.TerminalView
	sess *agent.AgentSession
	done chan struct{}
	once sync.Once
}

// newBangTerminal makes the terminal for command, sized to the overlay's
// inside for a width × height window; send tells the program when the
// program takes the screen.
func newBangTerminal(sess *agent.AgentSession, command string, send func(tea.Msg), width, height int) *bangTerminal {
	t := &bangTerminal{sess: sess, done: make(chan struct{})}
	cols, rows := ptyInnerSize(width, height)
	t.view = &bash.TerminalView{Cols: cols, Rows: rows}
	// OnTakeover is called from the run's loop, which must not wait for
	// the UI: the watch runs on its own goroutine and ends with the run.
	t.view.OnTakeover = func(pty.Takeover) { go watchTerminal(send, t, command) }
	return t
}

// Screen implements terminal.
func (t *bangTerminal) Screen() *pty.Screen { return t.view.Screen() }

// Write implements terminal.
func (t *bangTerminal) Write(p []byte) (int, error) { return t.view.Write(p) }

// Resize implements terminal.
func (t *bangTerminal) Resize(cols, rows int) { t.view.Resize(cols, rows) }

// Kill implements terminal: the `!` command is aborted, as esc does in the
// main view.
func (t *bangTerminal) Kill() {
	if !ended(t) {
		t.sess.AbortBash()
	}
}

// background implements backgrounder: the model moves the running `!`
// command to the background (moveToBackground).
func (t *bangTerminal) background() {}

// usedFullScreen reports whether the program went on the alternate screen
// (vim, less, top): its result is then its last screen.
func (t *bangTerminal) usedFullScreen() bool {
	scr := t.view.Screen()
	if scr == nil {
		return false
	}
	_, ok := scr.FullScreenText()
	return ok
}

// Done implements terminal.
func (t *bangTerminal) Done() <-chan struct{} { return t.done }

// end marks the command ended (after ExecuteBash returned).
func (t *bangTerminal) end() { t.once.Do(func() { close(t.done) }) }

package tui

import (
	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"

	"agentsh/internal/jobs"
)

// layer is a modal surface: the pager, the jobs panel, an attached job, the
// PTY overlay, the quit question. Layers are kept on one stack over the
// transcript and the editor; the top one takes the input until it closes,
// and answers the model with an action value instead of reaching into it.
type layer interface {
	// update handles a message. Input (a key, a paste, a mouse event)
	// reaches the top layer first, and a layer below only when every
	// layer above answered passOn; everything else the model hands the
	// layers (a resize, a layer's own reports) reaches each of them. The
	// answer is an action for the model (nil: none) and a command.
	update(msg tea.Msg) (action, tea.Cmd)
	// view draws the layer for a width × height window.
	view(width, height int, st *styles) surface
	// covers reports whether the layer fills the whole window: nothing
	// below it is drawn.
	covers() bool
}

// surface is what a layer draws: the whole window when the layer covers
// it, else a box whose top is row y (an empty box: nothing, as for the quit
// question, which the status line asks). cursor is in window coordinates;
// nil hides it, unless below is set: the cursor stays where the drawing
// below put it (the approval question leaves the editor's cursor shown,
// as what is typed goes there).
type surface struct {
	content string
	y       int
	cursor  *tea.Cursor
	below   bool
}

// action is a layer's answer to a message, carried out by the model (see
// model.apply).
type action any

// The actions.
type (
	// passOn: the input is not the layer's; the layer below gets it, or
	// the transcript and the editor.
	passOn struct{}
	// closeLayer: the layer is done and leaves the stack; the layer
	// below, when it has a note line (noter), shows note.
	closeLayer struct{ note string }
	// quitNow: quit, no more questions asked.
	quitNow struct{}
	// openArtifact: show artifact id in the pager; when it cannot be
	// opened, the asking layer's note (noter) says why.
	openArtifact struct{ id, title string }
	// attachJob: show job's live screen over the stack.
	attachJob struct{ job *jobs.Job }
	// moveToBackground: the running `!` command or model's bash call
	// becomes a job (keys.Overlay.Background on a plain program).
	moveToBackground struct{}
)

// noter is a layer with a line for notes (the jobs panel's footer).
type noter interface{ say(note string) }

// stopper is a layer that runs something (a PTY program, a watch of a
// job's screen, an open file) that must stop when agentsh quits.
type stopper interface{ stop() }

// findLayer is the topmost layer of type T on the stack, or T's zero value.
func findLayer[T layer](ls []layer) T {
	for i := len(ls) - 1; i >= 0; i-- {
		if l, ok := ls[i].(T); ok {
			return l
		}
	}
	var zero T
	return zero
}

// push puts l on top of the stack.
func (m *model) push(l layer) { m.layers = append(m.layers, l) }

// pushUnderScreens puts l, which the user did not open (the PTY overlay of
// the model's tool call), on top of everything but the layers that cover
// the window (the pager, the jobs panel and what lies over them): a program
// does not pop up over what the user reads, and shows once that closes.
func (m *model) pushUnderScreens(l layer) {
	for i, x := range m.layers {
		if x.covers() {
			m.layers = append(m.layers[:i], append([]layer{l}, m.layers[i:]...)...)
			return
		}
	}
	m.push(l)
}

// removeLayer takes l off the stack.
func (m *model) removeLayer(l layer) {
	for i, x := range m.layers {
		if x == l {
			m.layers = append(m.layers[:i], m.layers[i+1:]...)
			return
		}
	}
}

// input hands a key, paste or mouse event down the stack from the top, to
// the first layer that does not pass it on; handled is false when every
// layer did (or there is none): the transcript and the editor get it.
func (m *model) input(msg tea.Msg) (cmd tea.Cmd, handled bool) {
	for i := len(m.layers) - 1; i >= 0; i-- {
		l := m.layers[i]
		a, c := l.update(msg)
		if _, ok := a.(passOn); ok {
			continue
		}
		return tea.Batch(c, m.apply(l, a)), true
	}
	return nil, false
}

// broadcast hands msg to every layer, from the top.
func (m *model) broadcast(msg tea.Msg) tea.Cmd {
	var cmds []tea.Cmd
	for _, l := range append([]layer(nil), m.layers...) {
		a, c := l.update(msg)
		cmds = append(cmds, c, m.apply(l, a))
	}
	return tea.Batch(cmds...)
}

// apply carries out layer l's action.
func (m *model) apply(l layer, a action) tea.Cmd {
	switch a := a.(type) {
	case closeLayer:
		m.removeLayer(l)
		if n, ok := m.topLayer().(noter); ok && a.note != "" {
			n.say(a.note)
		}
	case quitNow:
		m.removeLayer(l)
		return m.quit()
	case trustAnswer:
		return m.trustAnswered(l, a)
	case openArtifact:
		problem := m.openArtifact(a.id, a.title)
		if n, ok := l.(noter); ok {
			n.say(problem)
		}
	case moveToBackground:
		m.moveToBackground()
	case declineAndStop:
		m.removeLayer(l)
		m.declineAndStop(a) // approval.go
	case resumeSession:
		m.removeLayer(l)
		return m.resumeChosen(a.info)
	case switchModel:
		m.removeLayer(l)
		m.modelChosen(a.model)
	case attachJob:
		at := newJobAttach(a.job)
		at.fit(m.width, m.height)
		m.push(at)
		return at.watch(false)
	}
	return nil
}

// topLayer is the top of the stack, nil when it is empty.
func (m *model) topLayer() layer {
	if len(m.layers) == 0 {
		return nil
	}
	return m.layers[len(m.layers)-1]
}

// screen draws the stack: from the topmost layer that covers the window
// (or, when none does, the transcript, the editor and the status line) up
// to the top, each layer's box over what lies below. The cursor is the
// topmost drawing's.
func (m *model) screen() (string, *tea.Cursor) {
	base := -1
	for i := len(m.layers) - 1; i >= 0; i-- {
		if m.layers[i].covers() {
			base = i
			break
		}
	}
	var content string
	var cursor *tea.Cursor
	if base < 0 {
		content, cursor = m.mainView()
	} else {
		s := m.layers[base].view(m.width, m.height, m.st)
		content, cursor = s.content, s.cursor
	}
	var boxes []*lipgloss.Layer
	for _, l := range m.layers[base+1:] {
		s := l.view(m.width, m.height, m.st)
		if s.content == "" {
			continue
		}
		boxes = append(boxes, lipgloss.NewLayer(s.content).X(0).Y(s.y).Z(len(boxes)+1))
		if !s.below {
			cursor = s.cursor
		}
	}
	if len(boxes) > 0 {
		content = lipgloss.NewCompositor(append([]*lipgloss.Layer{lipgloss.NewLayer(content)}, boxes...)...).Render()
	}
	return content, cursor
}

// bottomBox draws a terminal box (draw, at the overlay's size) at the
// bottom of a width × height window, with the box's cursor, if shown.
func bottomBox(width, height int, st *styles, draw func(w, h int, st *styles) (string, int, int)) surface {
	ow, oh := overlaySize(width, height)
	y := height - oh
	box, cx, cy := draw(ow, oh, st)
	s := surface{content: box, y: y}
	if cx >= 0 {
		s.cursor = tea.NewCursor(cx, y+cy)
	}
	return s
}

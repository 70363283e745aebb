package tui

import (
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/jobs"
)

// attachChangedMsg tells the model that an attached job's screen changed
// or the job ended: the next View shows it.
type attachChangedMsg struct{ a *jobAttach }

// jobAttach is a job's live screen in the PTY overlay, drawn over the jobs
// panel. Unlike a `!` command's overlay it never kills: every key but
// DetachKey goes to the program (esc included: vim needs it), and DetachKey
// leaves the job running. While attached the job's terminal has the
// overlay's size; detaching gives it back the size it had, so the model's
// view of the job does not depend on the user's window.
type jobAttach struct {
	job        *jobs.Job
	cols, rows int           // the job's terminal size before attaching
	detached   chan struct{} // closed on detach: ends the watch command
	stopped    bool
}

func newJobAttach(j *jobs.Job) *jobAttach {
	a := &jobAttach{job: j, detached: make(chan struct{})}
	a.cols, a.rows = j.Size()
	return a
}

// ended reports whether the job is over (its final state recorded).
func (a *jobAttach) ended() bool { return a.job.State().Ended() }

// fit sizes the job's terminal to the overlay of a width × height window.
func (a *jobAttach) fit(width, height int) {
	cols, rows := ptyInnerSize(width, height)
	a.job.Resize(cols, rows)
}

// detach gives the job its own size back and stops watching it.
func (a *jobAttach) detach() {
	if a.stopped {
		return
	}
	a.stopped = true
	close(a.detached)
	a.job.Resize(a.cols, a.rows)
}

// update implements layer: every key but DetachKey goes to the program;
// DetachKey, or any key once the job has ended, detaches and closes the
// view with a note for the panel below.
func (a *jobAttach) update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		if a.ended() || is(keyName(msg.String()), keys.Attach.Detach) {
			return a.leave(), nil
		}
		if b := encodeKey(msg.Key(), appCursor(a.job.Screen())); len(b) > 0 {
			_, _ = a.job.Write(b) // fails only once the job has ended: the view says so
		}
	case tea.PasteMsg:
		if !a.ended() {
			_, _ = a.job.Write([]byte(msg.Content))
		}
	case tea.MouseWheelMsg:
		return passOn{}, nil
	case tea.WindowSizeMsg:
		a.fit(msg.Width, msg.Height)
	case attachChangedMsg:
		if msg.a == a { // not a report from an earlier, detached view
			return nil, a.changed()
		}
	}
	return nil, nil
}

// leave detaches; the note tells the panel how the job is.
func (a *jobAttach) leave() action {
	a.detach()
	if s := a.job.State(); s.Ended() {
		return closeLayer{note: "job " + a.job.ID() + " " + s.String()}
	}
	return closeLayer{note: "detached from job " + a.job.ID() + ": it keeps running"}
}

// covers implements layer: the jobs panel stays visible above the box.
func (a *jobAttach) covers() bool { return false }

// stop implements stopper.
func (a *jobAttach) stop() { a.detach() }

// watch waits for the job's screen to change or the job to end, and
// reports it; paced, it first lets a frame pass, so a flood of output
// costs at most one redraw per frame. Nothing is reported after detach.
func (a *jobAttach) watch(paced bool) tea.Cmd {
	j, stop := a.job, a.detached
	return func() tea.Msg {
		if paced {
			select {
			case <-stop:
				return nil
			case <-j.Done():
			case <-time.After(frameInterval):
			}
		}
		select {
		case <-stop:
			return nil
		case <-j.Screen().Changed():
		case <-j.Done():
			j.Final() // the end is recorded before the view asks for it
		}
		select {
		case <-stop: // a select picks at random among ready cases
			return nil
		default:
			return attachChangedMsg{a: a}
		}
	}
}

// changed handles the watch's report: the next watch, until the job ends.
func (a *jobAttach) changed() tea.Cmd {
	if a.stopped || a.ended() {
		return nil
	}
	return a.watch(true)
}

// box draws the overlay box at width × height (outer size) and the cursor
// inside it (-1 when hidden).
func (a *jobAttach) box(width, height int, st *styles) (string, int, int) {
	s := a.job.State()
	badge, footer := st.badgeRunning, attachFooterText()
	switch {
	case s.Kind == jobs.Exited && s.Code == 0:
		badge, footer = st.badgeDone, attachEndedFooter()
	case s.Ended():
		badge, footer = st.badgeFailed, attachEndedFooter()
	}
	title := "job " + a.job.ID() + " · $ " + a.job.Command()
	box, cx, cy := terminalBox(width, height, title, badge.Render(s.String()), footer, a.job.Screen(), st)
	if s.Ended() {
		cx, cy = -1, -1
	}
	return box, cx, cy
}

// view implements layer: the box at the bottom of the window.
func (a *jobAttach) view(width, height int, st *styles) surface {
	return bottomBox(width, height, st, a.box)
}

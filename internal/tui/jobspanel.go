package tui

import (
	"fmt"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/jobs"
	"agentsh/internal/tui/pager"
)

// jobKilledMsg reports a kill from the panel, once the job is gone.
type jobKilledMsg struct {
	id    string
	state jobs.State
}

// jobsPanel covers the screen with the session's jobs: one row each (id,
// state, runtime, output size, command) and the last output of the
// selected one from its terminal's screen. It reads the jobs as it draws,
// so what it shows is always current.
type jobsPanel struct {
	mgr  *jobs.Manager
	sel  int    // index in mgr.List(), which only grows
	note string // the answer to the last key, in place of the help
}

func newJobsPanel(mgr *jobs.Manager) *jobsPanel {
	p := &jobsPanel{mgr: mgr}
	// Start on the newest job that has not ended, else the newest.
	list := mgr.List()
	p.sel = len(list) - 1
	for i := len(list) - 1; i >= 0; i-- {
		if !list[i].State().Ended() {
			p.sel = i
			break
		}
	}
	return p
}

func (p *jobsPanel) selected(list []*jobs.Job) *jobs.Job {
	if len(list) == 0 {
		return nil
	}
	p.sel = min(max(p.sel, 0), len(list)-1)
	return list[p.sel]
}

// update implements layer: the panel takes every key; its answers are
// closeLayer, openArtifact (a job's whole output) and attachJob. A kill
// runs as a command (Kill waits until the job's processes are gone: not in
// Update) whose report, jobKilledMsg, comes back here.
func (p *jobsPanel) update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case jobKilledMsg:
		p.note = "job " + msg.id + " " + msg.state.String()
		return nil, nil
	case tea.MouseWheelMsg:
		return passOn{}, nil
	case tea.KeyPressMsg:
	default:
		return nil, nil // a paste or a click has no use here
	}
	k, pk := keyName(msg.(tea.KeyPressMsg).String()), keys.Panel
	list := p.mgr.List()
	p.note = ""
	switch {
	case is(k, pk.Close):
		return closeLayer{}, nil
	case is(k, pk.Up):
		p.sel--
		p.selected(list)
	case is(k, pk.Down):
		p.sel++
		p.selected(list)
	case is(k, pk.Output):
		j := p.selected(list)
		if j == nil {
			return nil, nil
		}
		id := j.ArtifactID()
		if id == "" {
			p.note = "job " + j.ID() + " has no output file yet: its last output is shown above"
			return nil, nil
		}
		return openArtifact{id: id, title: "job " + j.ID() + ": " + oneLine(j.Command())}, nil
	case is(k, pk.Attach):
		j := p.selected(list)
		if j == nil {
			return nil, nil
		}
		if st := j.State(); st.Ended() {
			p.note = fmt.Sprintf("job %s has already ended (%s)", j.ID(), st)
			return nil, nil
		}
		return attachJob{job: j}, nil
	case is(k, pk.Kill):
		j := p.selected(list)
		if j == nil {
			return nil, nil
		}
		if st := j.State(); st.Ended() {
			p.note = fmt.Sprintf("job %s has already ended (%s)", j.ID(), st)
			return nil, nil
		}
		p.note = "killing job " + j.ID() + "…"
		return nil, func() tea.Msg { return jobKilledMsg{id: j.ID(), state: j.Kill()} }
	}
	return nil, nil
}

// say implements noter.
func (p *jobsPanel) say(note string) { p.note = note }

// covers implements layer.
func (p *jobsPanel) covers() bool { return true }

// view implements layer.
func (p *jobsPanel) view(width, height int, st *styles) surface {
	return surface{content: p.draw(width, height, st)}
}

// draw draws the panel in exactly height lines of at most width cells.
func (p *jobsPanel) draw(width, height int, st *styles) string {
	list := p.mgr.List()
	cur := p.selected(list)
	lines := make([]string, 0, height)
	add := func(s string) {
		if ansi.StringWidth(s) > width {
			s = ansi.Truncate(s, width, "…")
		}
		lines = append(lines, s)
	}
	running, waiting := 0, 0
	for _, j := range list {
		if s := j.State(); !s.Ended() {
			running++
			if s.Kind == jobs.WaitingForInput {
				waiting++
			}
		}
	}
	title := fmt.Sprintf("Jobs · %d running", running)
	if waiting > 0 {
		title += fmt.Sprintf(" · %d waiting for input", waiting)
	}
	add(st.overlayTitle.Render(title))

	if len(list) == 0 {
		add("")
		add(st.dim.Render("No jobs yet: the model starts one with bash background: true."))
	} else {
		add(st.dim.Render(fmt.Sprintf("  %-4s %-18s %8s %10s  %s", "ID", "STATE", "RUNTIME", "OUTPUT", "COMMAND")))
		// The list takes at most half the body; the rest shows output.
		listH := min(len(list), max((height-4)/2, 1))
		first := min(max(p.sel-listH+1, 0), len(list)-listH)
		for i := first; i < first+listH; i++ {
			j := list[i]
			s := j.State()
			mark := "  "
			if i == p.sel {
				mark = "› "
			}
			row := fmt.Sprintf("%s%-4s %-18s %8s %10s  %s", mark, j.ID(), s, runtimeText(j.Runtime()),
				pager.HumanSize(int64(j.OutputBytes())), strings.ReplaceAll(j.Command(), "\n", " "))
			if ansi.StringWidth(row) > width {
				row = ansi.Truncate(row, width, "…")
			}
			switch {
			case i == p.sel:
				row = st.selected.Render(row)
			case s.Ended():
				row = st.dim.Render(row)
			}
			add(row)
		}
		add("")
		rule := "── last output of job " + cur.ID() + " "
		add(st.dim.Render(rule + strings.Repeat("─", max(width-ansi.StringWidth(rule), 0))))
		room := height - len(lines) - 1
		out := cur.Screen().Text()
		for len(out) > 0 && strings.TrimSpace(out[len(out)-1]) == "" {
			out = out[:len(out)-1]
		}
		if len(out) > room {
			out = out[len(out)-room:]
		}
		for _, l := range out {
			add(strings.TrimRight(l, " "))
		}
	}
	for len(lines) < height-1 {
		lines = append(lines, "")
	}
	lines = lines[:height-1]
	if p.note != "" {
		add(st.warning.Render(p.note))
	} else {
		add(st.dim.Render(jobsPanelHelp()))
	}
	return strings.Join(lines, "\n")
}

// runtimeText is a job's runtime to the second: 9s, 3m04s, 1h02m.
func runtimeText(d time.Duration) string {
	s := int(d / time.Second)
	switch {
	case s < 60:
		return fmt.Sprintf("%ds", s)
	case s < 3600:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%dh%02dm", s/3600, s/60%60)
}

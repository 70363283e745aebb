package tui

import (
	"strconv"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/jobs"
)

// jobsInterval is how often the screen looks at the jobs while any runs:
// their states change without telling the TUI (a prompt starts waiting,
// a server exits).
const jobsInterval = 500 * time.Millisecond

type jobsTickMsg struct{}

// jobsWatch keeps one jobs tick in flight while a job of the session
// runs, and none otherwise. Jobs start from the model's tool calls, so
// every message gives it the chance to notice a new one.
type jobsWatch struct {
	ticking bool
	told    map[*jobs.Job]bool // ended jobs already announced in the transcript
}

// ended returns, once each, the jobs that have ended since the last call:
// the transcript says so (the model is told at its next step; the user
// sees it here).
func (w *jobsWatch) ended(mgr *jobs.Manager) []*jobs.Job {
	if mgr == nil {
		return nil
	}
	if w.told == nil {
		w.told = map[*jobs.Job]bool{}
	}
	var out []*jobs.Job
	for _, j := range mgr.List() {
		if !w.told[j] && j.State().Ended() {
			w.told[j] = true
			out = append(out, j)
		}
	}
	return out
}

// update returns the next tick when one is due.
func (w *jobsWatch) update(msg tea.Msg, mgr *jobs.Manager) tea.Cmd {
	if _, ok := msg.(jobsTickMsg); ok {
		w.ticking = false
	}
	if mgr == nil || w.ticking || mgr.Running() == 0 {
		return nil
	}
	w.ticking = true
	return tea.Tick(jobsInterval, func(time.Time) tea.Msg { return jobsTickMsg{} })
}

// jobCounts are the jobs that have not ended, and how many of them wait
// for input.
func jobCounts(mgr *jobs.Manager) (running, waiting int) {
	if mgr == nil {
		return 0, 0
	}
	for _, j := range mgr.List() {
		switch j.State().Kind {
		case jobs.Running:
			running++
		case jobs.WaitingForInput:
			running++
			waiting++
		}
	}
	return running, waiting
}

// jobsWord is "1 job" or "N jobs".
func jobsWord(n int) string {
	if n == 1 {
		return "1 job"
	}
	return strconv.Itoa(n) + " jobs"
}

// jobsStatus is the status line's part for the jobs: "2 jobs", and
// "· 1 waiting for input" when a job waits; "" with none running.
func (m *model) jobsStatus() string {
	running, waiting := jobCounts(m.cfg.Jobs)
	if running == 0 {
		return ""
	}
	s := m.st.statusRunning.Render(jobsWord(running))
	if waiting > 0 {
		s += m.st.status.Render(" · ") + m.st.warning.Render(strconv.Itoa(waiting)+" waiting for input")
	}
	return s
}

// quitConfirm asks, once, before quitting stops running work (a turn of
// the agent, a `!` command, jobs): y quits; n and esc take the question
// back; any other key leaves it up. It draws nothing: the status line asks
// (view).
type quitConfirm struct {
	running int    // jobs
	work    string // what else runs ("the agent is working"), "" for nothing
}

// update implements layer.
func (q *quitConfirm) update(msg tea.Msg) (action, tea.Cmd) {
	k, ok := msg.(tea.KeyPressMsg)
	if !ok {
		return passOn{}, nil // a paste still reaches the editor, a click the transcript
	}
	switch kn := keyName(k.String()); {
	case is(kn, keys.Confirm.Yes):
		return quitNow{}, nil
	case is(kn, keys.Confirm.No):
		return closeLayer{}, nil
	}
	return nil, nil
}

// view implements layer: nothing over the screen.
func (q *quitConfirm) view(int, int, *styles) surface { return surface{} }

// covers implements layer.
func (q *quitConfirm) covers() bool { return false }

// question is what the status line asks.
func (q *quitConfirm) question() string {
	yn := " " + name(keys.Confirm.Yes) + "/" + name(keys.Confirm.No)
	switch {
	case q.work != "" && q.running > 0:
		return q.work + " and " + jobsWord(q.running) + " running — quit and stop them?" + yn
	case q.work != "":
		return q.work + " — quit and stop it?" + yn
	case q.running == 1:
		return "1 job running — quit and stop it?" + yn
	}
	return strconv.Itoa(q.running) + " jobs running — quit and stop them?" + yn
}

// runningWork names what runs besides jobs, which quitting would stop: the
// agent's turn (or a /compact), a `!` command; "" when nothing does.
func (m *model) runningWork() string {
	switch {
	case m.compacting:
		return "compacting"
	case m.runner.Busy():
		return "the agent is working"
	case m.bangRunning:
		return "a command is running"
	}
	return ""
}

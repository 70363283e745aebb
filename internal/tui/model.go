package tui

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/bash"
	"agentsh/internal/render"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// spinnerFrames animate the status line and running components.
var spinnerFrames = []string{"⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"}

const spinnerInterval = 80 * time.Millisecond

// wheelLines is how far one mouse-wheel notch scrolls the transcript.
const wheelLines = 3

type (
	tickMsg      struct{}
	agentDoneMsg struct{ err error }
	bangDoneMsg  struct {
		gen int
		res bash.BashResult
		err error
	}
)

// model is the whole screen. It is a pointer model: background goroutines
// only talk to it through messages (send) and the pump, never by touching
// its fields.
type model struct {
	cfg  Config
	ctx  context.Context // cancelled on quit
	st   *styles
	send func(tea.Msg)
	pump *pump
	host *terminalHost
	reg  *tools.Registry
	wg   *sync.WaitGroup // the agent and bang goroutines

	width, height int

	items   []item
	pending []item // bang commands started while the agent streams (SPEC §5)
	scroll  int    // lines scrolled up from the bottom; 0 follows new output
	// anchor pins the transcript line at the top of the screen while
	// scrolled up, so output streaming in below does not move what is read.
	anchor    item
	anchorOff int
	placed    []placed // where the last frame put each visible item
	selected  item     // the output block ctrl+o and ctrl+g act on; nil: the latest
	pager     *pager   // the full-output viewer, over everything
	jobsPanel *jobsPanel
	attach    *jobAttach // a job's live screen, over the jobs panel
	flash     string     // a one-key status message

	editor    *editor
	history   []string
	histPos   int // == len(history) while editing the draft
	histDraft string

	agentRunning bool
	agentCancel  context.CancelFunc
	assistant    *textItem
	tools        map[string]*toolItem

	bang        *bangItem
	bangGen     int
	bangBg      chan struct{} // the running `!` command's ctrl+b; nil once closed
	bangRunning bool

	overlay *overlay

	quitArmed bool
	quitting  bool
	confirm   *quitConfirm // quitting would stop running jobs: asked first
	jobsWatch jobsWatch
	spin      int
	edX, edY  int // the editor's cursor, from the last editorView
	ticking   bool
}

// newModel builds the screen; send delivers messages to the running
// program (p.Send) and must be safe to call from any goroutine.
func newModel(ctx context.Context, cfg Config, send func(tea.Msg)) (*model, error) {
	m := &model{
		cfg:   cfg,
		ctx:   ctx,
		st:    newStyles(cfg.NoColor),
		send:  send,
		tools: map[string]*toolItem{},
		wg:    &sync.WaitGroup{},
	}
	m.pump = newPump(send)
	m.host = newTerminalHost(send)
	executor := cfg.Executor
	if executor == nil {
		executor = bash.Default()
	}
	sess := cfg.Session
	host := m.host
	reg, err := tools.Standard(tools.NewBash(&bash.Tool{Executor: executor, Jobs: cfg.Jobs}, func() bash.ToolContext {
		tc := sess.ToolContext(cfg.ToolSettings)
		tc.HasUI = true
		tc.Terminal = host
		return tc
	}), session.FileToolEnv(sess))
	if err != nil {
		return nil, err
	}
	m.reg = reg

	m.editor = newEditor()

	m.items = append(m.items, &textItem{kind: kindInfo, text: welcomeText})
	m.startup() // a resumed conversation, the command line's notice
	return m, nil
}

const placeholder = "Message the agent, or !command to run it in the shell"

const welcomeText = "agentsh · enter sends · shift+enter newline · !cmd runs in the shell (!!cmd keeps it from the model) · " +
	"esc cancels · ctrl+o expands output · alt+↑/↓ or a click selects one · ctrl+g shows a truncated output in full · " +
	"pgup/pgdn scroll · " + BackgroundKey + " moves a running command to the background · " + JobsKey + " or /jobs: jobs · " +
	"ctrl+c twice or ctrl+d quits"

// Init implements tea.Model.
func (m *model) Init() tea.Cmd { return m.initialPrompt() }

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	_, cmd := m.route(msg)
	if _, ok := msg.(jobsTickMsg); ok {
		for _, j := range m.jobsWatch.ended(m.cfg.Jobs) {
			m.notice(kindInfo, strings.TrimSuffix(bash.JobSentence(j.ID(), j.State()), ".")+": "+bash.FirstLine(j.Command()))
		}
	}
	if tc := m.jobsWatch.update(msg, m.cfg.Jobs); tc != nil {
		cmd = tea.Batch(cmd, tc)
	}
	return m, cmd
}

// route hands msg to the surface it is for.
func (m *model) route(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m, nil
	case tea.KeyPressMsg:
		if m.pager != nil {
			m.pagerInput(msg)
			return m, nil
		}
		if m.attach != nil {
			m.attachInput(msg)
			return m, nil
		}
		if m.jobsPanel != nil {
			return m, m.panelInput(msg)
		}
		return m.key(msg)
	case tea.PasteMsg:
		if m.pager != nil {
			m.pagerInput(msg)
			return m, nil
		}
		if m.attach != nil {
			m.attachInput(msg)
			return m, nil
		}
		if m.jobsPanel != nil {
			return m, nil
		}
		if m.overlay != nil {
			_, _ = m.overlay.s.Write([]byte(msg.Content))
			return m, nil
		}
		m.editor.InsertString(msg.Content)
		return m, nil
	case tea.MouseClickMsg:
		if m.pager == nil && m.jobsPanel == nil && m.overlay == nil && msg.Mouse().Button == tea.MouseLeft {
			m.click(msg.Mouse().Y)
		}
		return m, nil
	case tea.MouseWheelMsg:
		if m.pager != nil {
			m.pagerInput(msg)
			return m, nil
		}
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			m.scrollBy(wheelLines)
		case tea.MouseWheelDown:
			m.scrollBy(-wheelLines)
		}
		return m, nil
	case flushMsg:
		m.applyPump()
		return m, nil
	case tickMsg:
		m.spin = (m.spin + 1) % len(spinnerFrames)
		if m.busy() {
			return m, tick()
		}
		m.ticking = false
		return m, nil
	case agentDoneMsg:
		m.applyPump()
		m.agentFinished(msg.err)
		return m, nil
	case bangDoneMsg:
		m.applyPump()
		m.bangFinished(msg)
		return m, nil
	case ptyAttachMsg:
		m.overlay = &overlay{s: msg.s, command: msg.command}
		cols, rows := ptyInnerSize(m.width, m.height)
		msg.s.Resize(cols, rows)
		return m, m.startTick()
	case jobKilledMsg:
		if m.jobsPanel != nil {
			m.jobsPanel.note = "job " + msg.id + " " + msg.state.String()
		}
		return m, nil
	case ptyChangedMsg:
		return m, nil // the next View reads the screen
	case attachChangedMsg:
		if m.attach != msg.a {
			return m, nil // from a detached view
		}
		return m, m.attach.changed()
	case ptyDoneMsg:
		if m.overlay != nil && m.overlay.s == msg.s {
			m.overlay = nil
		}
		return m, nil
	}
	return m, nil
}

func (m *model) resize(w, h int) {
	m.width, m.height = w, h
	m.host.setWindow(w, h)
	m.editor.SetWidth(max(w-editorFrameW, 1))
	if m.overlay != nil {
		cols, rows := ptyInnerSize(w, h)
		m.overlay.s.Resize(cols, rows)
	}
	if m.attach != nil {
		m.attach.fit(w, h)
	}
}

func (m *model) key(msg tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	k := msg.String()
	if m.overlay != nil {
		// The program in the PTY owns the keyboard; only esc stays ours.
		if k == "esc" {
			m.overlay.killed = true
			m.overlay.s.Kill()
			return m, nil
		}
		if b := encodeKey(msg.Key()); len(b) > 0 {
			_, _ = m.overlay.s.Write(b)
		}
		return m, nil
	}
	if m.confirm != nil {
		switch m.confirm.update(msg) {
		case quitYes:
			m.confirm = nil
			return m, m.quit()
		case quitNo:
			m.confirm = nil
		}
		return m, nil
	}
	if k != "ctrl+c" {
		m.quitArmed = false
	}
	m.flash = ""
	switch k {
	case "ctrl+c":
		if m.quitArmed {
			m.quitArmed = false
			return m, m.requestQuit()
		}
		m.quitArmed = true
		m.editor.Reset()
		m.histPos = len(m.history)
		return m, nil
	case "ctrl+d":
		if m.editor.Value() == "" {
			return m, m.requestQuit()
		}
	case "esc":
		if !m.agentRunning && !m.bangRunning && m.selected != nil {
			m.selected = nil
			return m, nil
		}
		m.abort()
		return m, nil
	case "ctrl+o":
		m.toggleOutput()
		return m, nil
	case render.PagerKey:
		m.openPager()
		return m, nil
	case JobsKey:
		m.openJobsPanel()
		return m, nil
	case BackgroundKey:
		if m.bangRunning || m.agentRunning {
			// The running `!` command or model's bash call returns with
			// its output so far and goes on as a job (SPEC §9).
			if m.bangRunning && m.bangBg != nil {
				close(m.bangBg)
				m.bangBg = nil
			}
			m.cfg.Session.MoveToBackground()
			m.flash = "moved to the background · " + JobsKey + " shows the jobs"
			return m, nil
		}
	case "alt+up", "ctrl+up":
		m.selectOutput(-1)
		return m, nil
	case "alt+down", "ctrl+down":
		m.selectOutput(1)
		return m, nil
	case "pgup":
		m.scrollBy(max(m.transcriptHeight()-2, 1))
		return m, nil
	case "pgdown":
		m.scrollBy(-max(m.transcriptHeight()-2, 1))
		return m, nil
	case "enter":
		return m, m.submit()
	case "up":
		if m.editor.OnFirstRow() && m.recall(-1) {
			return m, nil
		}
	case "down":
		if m.editor.OnLastRow() && m.recall(1) {
			return m, nil
		}
	}
	m.editor.Update(msg)
	return m, nil
}

// recall moves through the history (dir -1 older, +1 newer); the text being
// typed is kept as the newest entry.
func (m *model) recall(dir int) bool {
	next := m.histPos + dir
	if next < 0 || next > len(m.history) || len(m.history) == 0 {
		return false
	}
	if m.histPos == len(m.history) {
		m.histDraft = m.editor.Value()
	}
	m.histPos = next
	if next == len(m.history) {
		m.editor.SetValue(m.histDraft)
	} else {
		m.editor.SetValue(m.history[next])
	}
	if dir < 0 {
		// Put the cursor on the first line, so another up keeps going back.
		m.editor.MoveToBegin()
	}
	return true
}

// requestQuit quits, after asking when jobs are running (quitting stops
// them: the caller closes the job manager).
func (m *model) requestQuit() tea.Cmd {
	if running, _ := jobCounts(m.cfg.Jobs); running > 0 {
		m.confirm = &quitConfirm{running: running}
		return nil
	}
	return m.quit()
}

func (m *model) quit() tea.Cmd {
	m.quitting = true
	m.abortAll()
	return tea.Quit
}

// abortAll stops everything running; the goroutines report back, but the
// program may already be gone (Run waits for them).
func (m *model) abortAll() {
	if m.agentCancel != nil {
		m.agentCancel()
	}
	m.cfg.Session.AbortBash()
	if m.overlay != nil {
		m.overlay.s.Kill()
	}
	if m.attach != nil {
		m.attach.detach()
	}
}

// abort is esc: the innermost running thing stops (the PTY program is
// handled in key).
func (m *model) abort() {
	switch {
	case m.agentRunning && m.agentCancel != nil:
		m.agentCancel()
	case m.bangRunning:
		m.cfg.Session.AbortBash()
	}
}

func (m *model) busy() bool { return m.agentRunning || m.bangRunning || m.overlay != nil }

func tick() tea.Cmd {
	return tea.Tick(spinnerInterval, func(time.Time) tea.Msg { return tickMsg{} })
}

func (m *model) startTick() tea.Cmd {
	if m.ticking {
		return nil
	}
	m.ticking = true
	return tick()
}

func (m *model) notice(kind textKind, text string) {
	m.addItem(&textItem{kind: kind, text: text})
}

// addItem appends to the transcript and follows it.
func (m *model) addItem(it item) {
	m.items = append(m.items, it)
	m.scroll = 0
}

func (m *model) pushHistory(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
	}
	m.histPos = len(m.history)
	m.histDraft = ""
}

func (m *model) submit() tea.Cmd {
	text := m.editor.Value()
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil
	}
	if trimmed == "/jobs" {
		m.pushHistory(text)
		m.editor.Reset()
		m.openJobsPanel()
		return nil
	}
	if strings.HasPrefix(trimmed, "!") {
		excluded := strings.HasPrefix(trimmed, "!!")
		command := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(trimmed, "!"), "!"))
		if command == "" {
			return nil
		}
		if m.bangRunning || m.cfg.Session.IsBashRunning() {
			// SPEC §5: refused, and the text stays for after the esc.
			m.notice(kindWarning, session.ErrBashRunning.Error())
			return nil
		}
		m.pushHistory(text)
		m.editor.Reset()
		return m.startBang(command, excluded)
	}
	if m.cfg.Provider == nil {
		m.pushHistory(text)
		m.editor.Reset()
		m.addItem(&textItem{kind: kindUser, text: text})
		m.notice(kindWarning, noModelText(m.cfg.ModelError))
		return nil
	}
	if m.agentRunning {
		m.notice(kindWarning, "The agent is still working. Press Esc to stop it first.")
		return nil
	}
	m.pushHistory(text)
	m.editor.Reset()
	m.addItem(&textItem{kind: kindUser, text: text})
	return m.startPrompt(text)
}

// NoModelHint is what a prompt without a configured model answers.
const NoModelHint = `No model configured. Set one with any of:
  --model provider/model          e.g. agentsh --model openai/gpt-4.1
  "model": "provider/model"       in ~/.config/agentsh/settings.json or .agentsh/settings.json
  AGENTSH_MODEL=provider/model    in the environment
with the provider's key in the environment (OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY).
!commands work without a model.`

func noModelText(reason string) string {
	if reason != "" {
		return "Model unavailable: " + reason + "\n" + NoModelHint
	}
	return NoModelHint
}

func (m *model) startBang(command string, excluded bool) tea.Cmd {
	it := &bangItem{bang: render.NewBang(command, excluded)}
	if m.agentRunning {
		m.pending = append(m.pending, it)
	} else {
		m.addItem(it)
	}
	m.scroll = 0
	m.bangGen++
	gen := m.bangGen
	m.bang, m.bangRunning = it, true
	bg := make(chan struct{}) // closed by ctrl+b, even before the command starts
	m.bangBg = bg
	sess, ctx, p, send := m.cfg.Session, m.ctx, m.pump, m.send
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		res, err := sess.ExecuteBash(ctx, command, func(b []byte) { p.chunk(gen, b) },
			session.BashOptions{ExcludeFromContext: excluded, BackgroundNow: bg})
		send(bangDoneMsg{gen: gen, res: res, err: err})
	}()
	return m.startTick()
}

func (m *model) bangFinished(msg bangDoneMsg) {
	if msg.gen != m.bangGen || m.bang == nil {
		return
	}
	it := m.bang
	m.bang, m.bangRunning, m.bangBg = nil, false, nil
	if msg.err != nil && msg.res.Output == "" && msg.res.ExitCode == nil && !msg.res.Cancelled {
		// Nothing ran: the component would only show an empty result.
		m.removeItem(it)
		if errors.Is(msg.err, session.ErrBashRunning) {
			m.notice(kindWarning, msg.err.Error())
			return
		}
		m.notice(kindError, "Bash command failed: "+msg.err.Error())
		return
	}
	var trunc *bash.TruncationMeta
	if meta := bash.ResultMeta(msg.res); meta != nil {
		trunc = meta.Truncation
	}
	if j := msg.res.Job; j != nil {
		// It waits for input or the user moved it: not an end, a job.
		it.bang.FinishAsJob(msg.res.Output, j.ID(), trunc)
	} else {
		it.bang.Finish(msg.res.Output, msg.res.ExitCode, msg.res.Cancelled, trunc)
	}
	if msg.err != nil {
		// The command ran but recording it failed.
		m.notice(kindError, "Bash command failed: "+msg.err.Error())
	}
}

func (m *model) removeItem(it item) {
	for _, list := range []*[]item{&m.items, &m.pending} {
		for i, x := range *list {
			if x == it {
				*list = append((*list)[:i], (*list)[i+1:]...)
				return
			}
		}
	}
}

func (m *model) startPrompt(text string) tea.Cmd {
	ctx, cancel := context.WithCancel(m.ctx)
	m.agentRunning, m.agentCancel = true, cancel
	sess, p, send, cfg, reg := m.cfg.Session, m.pump, m.send, m.cfg, m.reg
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		err := sess.Prompt(ctx, text, cfg.Provider, cfg.Model, reg, p.event)
		send(agentDoneMsg{err: err})
	}()
	return m.startTick()
}

func (m *model) agentFinished(err error) {
	if m.agentCancel != nil {
		m.agentCancel()
	}
	aborted := m.agentCancel != nil && errors.Is(err, context.Canceled)
	m.agentRunning, m.agentCancel, m.assistant = false, nil, nil
	for id, t := range m.tools {
		if t.file != nil {
			t.file.Running = false
		} else {
			t.call.Running = false
		}
		delete(m.tools, id)
	}
	// Bang commands that ran meanwhile join the transcript after the turn
	// they interrupted.
	m.items = append(m.items, m.pending...)
	m.pending = nil
	switch {
	case aborted:
		m.notice(kindInfo, "Aborted.")
	case err != nil:
		m.notice(kindError, "Error: "+err.Error())
	}
}

// applyPump brings the streamed state up to date.
func (m *model) applyPump() {
	for _, x := range m.pump.drain() {
		switch v := x.(type) {
		case bangChunk:
			if v.gen == m.bangGen && m.bangRunning && m.bang != nil {
				m.bang.bang.Append(v.data)
			}
		case session.Event:
			m.applyEvent(v)
		}
	}
}

func (m *model) applyEvent(e session.Event) {
	switch e.Type {
	case session.EventMessageStart:
		m.assistant = &textItem{kind: kindAssistant, live: true}
		m.addItem(m.assistant)
	case session.EventMessageUpdate, session.EventMessageEnd:
		if am, ok := e.Message.(*session.AssistantMessage); ok && m.assistant != nil {
			m.assistant.text = strings.TrimSpace(am.Text)
		}
		if e.Type == session.EventMessageEnd && m.assistant != nil {
			m.assistant.live = false
			if m.assistant.text == "" {
				m.removeItem(m.assistant)
			}
			m.assistant = nil
		}
	case session.EventToolExecutionStart:
		it := &toolItem{id: e.ToolCallID}
		if isFileTool(e.ToolName) {
			it.file = &render.FileCall{Tool: e.ToolName, Args: e.Args, Running: true}
		} else {
			it.call = m.newToolCall(e.ToolName, e.Args)
		}
		m.tools[e.ToolCallID] = it
		m.addItem(it)
	case session.EventToolExecutionUpdate:
		if it := m.tools[e.ToolCallID]; it != nil && it.call != nil {
			it.call.Output = e.PartialResult
		}
	case session.EventToolExecutionEnd:
		it := m.tools[e.ToolCallID]
		if it == nil || e.Result == nil {
			return
		}
		delete(m.tools, e.ToolCallID)
		if f := it.file; f != nil {
			f.Running, f.IsError, f.Output, f.Details = false, e.Result.IsError, e.Result.Content, e.Result.Details
			return
		}
		it.call.Running = false
		it.call.IsError = e.Result.IsError
		it.call.Output = e.Result.Content
		var d bash.ToolDetails
		if len(e.Result.Details) > 0 && json.Unmarshal(e.Result.Details, &d) == nil {
			if d.Meta != nil {
				it.call.Truncation = d.Meta.Truncation
			}
			it.call.JobID = d.JobID
		}
	}
}

func isFileTool(name string) bool {
	switch name {
	case tools.ReadName, tools.GrepName, tools.FindName, tools.EditName, tools.WriteName:
		return true
	}
	return false
}

// newToolCall describes a call for the renderer: the command, its cwd
// relative to the session's, and the timeout only when the model gave one.
func (m *model) newToolCall(name string, args json.RawMessage) *render.ToolCall {
	c := &render.ToolCall{Running: true}
	if name != tools.BashName {
		c.Command = name + " " + string(args)
		return c
	}
	p, err := bash.ParseToolParams(args)
	if err != nil {
		c.Command = string(args)
		return c
	}
	c.Command = p.Command
	if p.Timeout != nil {
		_, c.TimeoutSeconds = bash.ClampTimeout(p.Timeout)
	}
	if p.Cwd != "" {
		rel := p.Cwd
		if filepath.IsAbs(p.Cwd) {
			if r, err := filepath.Rel(m.cfg.Session.Cwd(), p.Cwd); err == nil && !strings.HasPrefix(r, "..") {
				rel = r
			}
		}
		if filepath.Clean(rel) != "." {
			c.CwdRel = rel
		}
	}
	return c
}

// outputs lists the transcript's output blocks (tool calls and bang
// commands), oldest first.
func (m *model) outputs() []item {
	var out []item
	for _, list := range [][]item{m.items, m.pending} {
		for _, it := range list {
			switch it.(type) {
			case *toolItem, *bangItem:
				out = append(out, it)
			}
		}
	}
	return out
}

// target is the block ctrl+o and ctrl+g act on: the selected one, else the
// newest.
func (m *model) target() item {
	if m.selected != nil {
		return m.selected
	}
	outs := m.outputs()
	if len(outs) == 0 {
		return nil
	}
	return outs[len(outs)-1]
}

// toggleOutput is ctrl+o: the target switches between its collapsed
// preview and the full output.
func (m *model) toggleOutput() {
	switch v := m.target().(type) {
	case *toolItem:
		v.toggle()
	case *bangItem:
		v.bang.Expanded = !v.bang.Expanded
	default:
		return
	}
	if m.selected != nil {
		m.reveal(m.selected)
	}
}

// selectOutput moves the selection to the previous (dir -1) or next output
// block and scrolls it into view; moving past the newest clears it.
func (m *model) selectOutput(dir int) {
	outs := m.outputs()
	if len(outs) == 0 {
		return
	}
	idx := len(outs) // none selected: as if just past the newest
	for i, it := range outs {
		if it == m.selected {
			idx = i
		}
	}
	idx += dir
	switch {
	case idx < 0:
		idx = 0
	case idx >= len(outs):
		m.selected = nil
		m.scroll, m.anchor = 0, nil
		return
	}
	m.selected = outs[idx]
	m.reveal(m.selected)
}

// click selects the output block under row y; clicking the selected block
// again expands or collapses it.
func (m *model) click(y int) {
	for _, p := range m.placed {
		if y < p.top || y >= p.bottom {
			continue
		}
		switch p.it.(type) {
		case *toolItem, *bangItem:
			if m.selected == p.it {
				m.toggleOutput()
			} else {
				m.selected = p.it
			}
		}
		return
	}
}

// reveal scrolls so that it is on screen: its bottom at the bottom of the
// transcript, or its top at the top when it is taller than the screen.
func (m *model) reveal(target item) {
	all := m.all()
	th := m.transcriptHeight()
	below := 0 // lines after target, separators included
	for i := len(all) - 1; i >= 0; i-- {
		h := m.itemHeight(all[i])
		if h == 0 {
			continue
		}
		if all[i] == target {
			s := below
			if h > th {
				s = below + h - th
			}
			m.scroll, m.anchor = max(s, 0), nil
			return
		}
		below += h + 1
	}
}

func (m *model) itemHeight(it item) int {
	s := it.view(m.width, m.st, spinnerFrames[m.spin])
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

func (m *model) all() []item {
	all := make([]item, 0, len(m.items)+len(m.pending))
	all = append(all, m.items...)
	return append(all, m.pending...)
}

// openPager is ctrl+g: the target's full output (its artifact) opens in the
// pager; without a target that has one, the newest truncated block does.
func (m *model) openPager() {
	cand := []item{m.target()}
	if m.selected == nil {
		outs := m.outputs()
		cand = cand[:0]
		for i := len(outs) - 1; i >= 0; i-- {
			cand = append(cand, outs[i])
		}
	}
	for _, it := range cand {
		id, title := artifactOf(it)
		if id == "" {
			continue
		}
		m.flash = m.openArtifact(id, title)
		return
	}
	m.flash = "No truncated output to view (" + render.PagerKey + " opens the full output of a truncated result)."
}

// openArtifact shows artifact id in the pager, or says why it cannot.
func (m *model) openArtifact(id, title string) (problem string) {
	arts := m.cfg.Session.Artifacts()
	if arts == nil {
		return "No artifact folder: this session keeps no full outputs."
	}
	path, err := arts.Resolve(session.ArtifactScheme + id)
	if err == nil {
		var p *pager
		if p, err = openPager(path, session.ArtifactScheme+id+" · "+title); err == nil {
			m.pager = p
			return ""
		}
	}
	return "Cannot open artifact://" + id + ": " + err.Error()
}

// openJobsPanel is JobsKey and /jobs.
func (m *model) openJobsPanel() {
	if m.cfg.Jobs == nil {
		m.flash = "No background jobs in this session."
		return
	}
	m.jobsPanel = newJobsPanel(m.cfg.Jobs)
}

// panelInput hands a key to the jobs panel and carries out its answer.
func (m *model) panelInput(msg tea.Msg) tea.Cmd {
	switch a := m.jobsPanel.update(msg).(type) {
	case panelClose:
		m.jobsPanel = nil
	case panelOpenOutput:
		id := a.job.ArtifactID()
		if id == "" {
			m.jobsPanel.note = "job " + a.job.ID() + " has no output file yet: its last output is shown above"
			return nil
		}
		m.jobsPanel.note = m.openArtifact(id, "job "+a.job.ID()+": "+oneLine(a.job.Command()))
	case panelAttach:
		return m.openAttach(a.job)
	case panelKill:
		j := a.job
		// Kill waits until the job's processes are gone: not in Update.
		return func() tea.Msg { return jobKilledMsg{id: j.ID(), state: j.Kill()} }
	}
	return nil
}

// artifactOf returns the artifact id of a truncated block and its title.
func artifactOf(it item) (id, title string) {
	switch v := it.(type) {
	case *toolItem:
		if v.call == nil {
			return "", ""
		}
		if t := v.call.Truncation; t != nil && !v.call.Running {
			return t.ArtifactID, "$ " + oneLine(v.call.Command)
		}
	case *bangItem:
		if t := v.bang.Truncation(); t != nil {
			return t.ArtifactID, "! " + oneLine(v.bang.Command)
		}
	}
	return "", ""
}

func (m *model) pagerInput(msg tea.Msg) {
	if m.pager.Update(msg) {
		_ = m.pager.Close()
		m.pager = nil
	}
}

func (m *model) scrollBy(n int) {
	m.scroll = max(m.scroll+n, 0) // the upper bound is applied by the view
	m.anchor = nil                // the view pins the new top line
}

// editorFrameW is the editor box's border and padding, left plus right.
const editorFrameW = 4

// editorHeight is the editor box's height (textarea rows + border).
func (m *model) editorHeight() int { return m.editor.Height() + 2 }

// transcriptHeight is the rows left for the transcript above the editor and
// the status line.
func (m *model) transcriptHeight() int {
	return max(m.height-m.editorHeight()-1, 1)
}

// View implements tea.Model.
func (m *model) View() tea.View {
	if m.width <= 0 || m.height <= 0 || m.quitting {
		v := tea.NewView("")
		v.AltScreen = !m.quitting
		return v
	}
	if m.pager != nil || m.jobsPanel != nil {
		var content string
		var cursor *tea.Cursor
		if m.pager != nil {
			content = m.pager.View(m.width, m.height, m.st)
		} else {
			content = m.jobsPanel.view(m.width, m.height, m.st)
			if m.attach != nil {
				content, cursor = m.overlayOn(content, m.attach.view)
			}
		}
		v := tea.NewView(content)
		v.Cursor = cursor
		v.AltScreen = true
		v.MouseMode = tea.MouseModeCellMotion
		v.WindowTitle = "agentsh"
		return v
	}
	th := m.transcriptHeight()
	var b strings.Builder
	b.WriteString(m.transcriptView(m.width, th))
	b.WriteByte('\n')
	b.WriteString(m.editorView())
	b.WriteByte('\n')
	b.WriteString(m.statusView())
	content := b.String()

	var cursor *tea.Cursor
	if m.overlay != nil {
		content, cursor = m.overlayOn(content, m.overlay.view)
	} else {
		// The editor's border and padding come before the text.
		cursor = tea.NewCursor(m.edX+editorFrameW/2, th+1+m.edY)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	v.MouseMode = tea.MouseModeCellMotion
	v.Cursor = cursor
	v.WindowTitle = "agentsh"
	return v
}

// overlayOn draws a terminal box (view) over the bottom of content, at the
// overlay's size, and returns the screen with the box's cursor, if shown.
func (m *model) overlayOn(content string, view func(w, h int, st *styles) (string, int, int)) (string, *tea.Cursor) {
	ow, oh := overlaySize(m.width, m.height)
	y := m.height - oh
	box, cx, cy := view(ow, oh, m.st)
	content = lipgloss.NewCompositor(
		lipgloss.NewLayer(content),
		lipgloss.NewLayer(box).X(0).Y(y).Z(1),
	).Render()
	if cx < 0 {
		return content, nil
	}
	return content, tea.NewCursor(cx, y+cy)
}

// highlight marks the selected block on its header: the first line with
// text (a bang block opens with a rule).
func (m *model) highlight(ls []string) []string {
	ls = append([]string(nil), ls...)
	for i, l := range ls {
		plain := ansi.Strip(l)
		if strings.Trim(plain, "─ ") != "" {
			ls[i] = m.st.selected.Render(plain)
			break
		}
	}
	return ls
}

// placed is an item's rows on the last frame, [top, bottom).
type placed struct {
	it          item
	top, bottom int
}

// transcriptView renders the bottom of the transcript, scrolled up by
// m.scroll lines. Only the items that reach the screen are rendered (each
// caches its own output), so a long session costs no more than a short one.
// While scrolled up, the line at the top stays where it is as output grows
// below it (m.anchor).
func (m *model) transcriptView(width, height int) string {
	spinner := spinnerFrames[m.spin]
	all := m.all()
	type chunk struct {
		it    item
		lines []string
		dist  int // lines from the bottom of the transcript to this item's top
	}
	var chunks []chunk // bottom-up
	total := 0
	anchorSeen := m.anchor == nil
	for i := len(all) - 1; i >= 0 && (total < height+m.scroll || !anchorSeen); i-- {
		s := all[i].view(width, m.st, spinner)
		if s == "" {
			continue
		}
		ls := strings.Split(s, "\n")
		if all[i] == m.selected {
			ls = m.highlight(ls)
		}
		if total > 0 {
			ls = append(ls, "") // a blank line between items
		}
		total += len(ls)
		chunks = append(chunks, chunk{it: all[i], lines: ls, dist: total})
		if all[i] == m.anchor {
			anchorSeen = true
			// Keep the anchored line at the top of the screen.
			m.scroll = max(total-m.anchorOff-height, 0)
		}
	}
	if m.scroll > max(total-height, 0) {
		m.scroll = max(total-height, 0)
	}
	lines := make([]string, 0, total)
	for i := len(chunks) - 1; i >= 0; i-- {
		lines = append(lines, chunks[i].lines...)
	}
	end := len(lines) - m.scroll
	start := max(end-height, 0)

	// Remember where everything went: for clicks, and for the anchor.
	m.placed = m.placed[:0]
	m.anchor = nil
	for _, c := range chunks {
		top := total - c.dist - start // screen row of the item's first line
		bottom := top + len(c.lines)
		if bottom <= 0 || top >= end-start {
			continue
		}
		m.placed = append(m.placed, placed{it: c.it, top: top, bottom: bottom})
		if m.scroll > 0 && top <= 0 {
			m.anchor, m.anchorOff = c.it, -top
		}
	}

	out := make([]string, 0, height)
	for _, l := range lines[start:end] {
		if ansi.StringWidth(l) > width {
			l = ansi.Truncate(l, width, "")
		}
		out = append(out, l)
	}
	for len(out) < height {
		out = append(out, "")
	}
	if m.scroll > 0 {
		out[len(out)-1] = m.st.scrollIndicator.Render(ansi.Truncate("↓ "+strconv.Itoa(m.scroll)+" more lines below (pgdn)", width, ""))
	}
	return strings.Join(out, "\n")
}

func (m *model) editorView() string {
	text, x, y := m.editor.View(placeholder)
	if m.editor.Value() == "" {
		text = m.st.dim.Render(text)
	}
	m.edX, m.edY = x, y
	style := m.st.editor
	v := strings.TrimLeft(m.editor.Value(), " \t\n")
	switch {
	case strings.HasPrefix(v, "!!"):
		style = m.st.editorBangDim
	case strings.HasPrefix(v, "!"):
		style = m.st.editorBang
	}
	return style.Render(text)
}

func (m *model) statusView() string {
	cwd := m.cfg.Session.Cwd()
	if home, err := os.UserHomeDir(); err == nil && home != "" && (cwd == home || strings.HasPrefix(cwd, home+"/")) {
		cwd = "~" + strings.TrimPrefix(cwd, home)
	}
	label := m.cfg.ModelLabel
	if label == "" {
		label = m.cfg.Model
	}
	model := m.st.statusModel.Render(label)
	if m.cfg.Provider == nil {
		model = m.st.warning.Render(noModelStatus(m.cfg))
	}
	left := m.st.status.Render(cwd) + m.st.status.Render(" · ") + model

	var right string
	spinner := spinnerFrames[m.spin]
	switch {
	case m.confirm != nil:
		right = m.st.warning.Render(m.confirm.view())
	case m.quitArmed:
		right = m.st.warning.Render("press ctrl+c again to quit")
	case m.flash != "":
		right = m.st.warning.Render(m.flash)
	case m.overlay != nil:
		right = m.st.statusRunning.Render(spinner + " terminal: " + oneLine(m.overlay.command) + " (esc kills)")
	case m.agentRunning && len(m.tools) > 0:
		right = m.st.statusRunning.Render(spinner + " running tool… (esc to abort)")
	case m.agentRunning:
		right = m.st.statusRunning.Render(spinner + " working… (esc to abort)")
	case m.bangRunning && m.bang != nil:
		right = m.st.statusRunning.Render(spinner + " $ " + oneLine(m.bang.bang.Command) + " (esc to cancel)")
	case m.selected != nil:
		hint := "selected · ctrl+o expand"
		if id, _ := artifactOf(m.selected); id != "" {
			hint += " · " + render.PagerKey + " full output"
		}
		right = m.st.status.Render(hint + " · esc deselect")
	}
	if js := m.jobsStatus(); js != "" && m.confirm == nil {
		if right != "" {
			right += m.st.status.Render(" · ")
		}
		right += js
	}
	gap := m.width - lipgloss.Width(left) - lipgloss.Width(right)
	if gap < 1 {
		if right != "" {
			left = ansi.Truncate(left, max(m.width-lipgloss.Width(right)-1, 0), "…")
			gap = m.width - lipgloss.Width(left) - lipgloss.Width(right)
		}
		if gap < 1 {
			return ansi.Truncate(left+" "+right, m.width, "…")
		}
	}
	return left + strings.Repeat(" ", gap) + right
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) > 40 {
		s = string([]rune(s)[:39]) + "…"
	}
	return s
}

package tui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
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
	tickMsg struct{}
	// agentDoneMsg ends a turn: Update Ends run when it takes it.
	agentDoneMsg struct {
		run *agent.Run
		err error
	}
	bangDoneMsg struct {
		gen int
		res bash.BashResult
		// settingsErr: the settings files did not load; the command ran
		// with the last ones that did (session.BashRun).
		settingsErr string
		fullScreen  bool // the program used the alternate screen
		err         error
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
	// current is the session on screen; the model's tools read it on
	// every call (from the agent's goroutine).
	current atomic.Pointer[agent.AgentSession]
	pump    *pump
	host    *terminalHost
	reg     *tools.Registry
	// runner runs the agent's turns and /compact, one at a time: Busy
	// from the start of one until Update has taken its end.
	runner *agent.Runner
	wg     *sync.WaitGroup // the bang command's and the other goroutines

	width, height int

	tr *transcript
	// layers are the modal surfaces over the transcript and the editor,
	// the top one last (layers.go).
	layers []layer
	flash  string // a one-key status message

	editor    *editor
	menu      slashMenu
	mention   *mention // the `@` file completion (mention.go)
	history   []string
	histPos   int // == len(history) while editing the draft
	histDraft string

	compacting bool // the runner's run is a /compact (compact.go)

	bang        *bangItem
	bangGen     int
	bangBg      chan struct{} // the running `!` command's ctrl+b; nil once closed
	bangRunning bool
	bangTerm    *bangTerminal // the running `!` command's terminal

	usage     usage // the latest model call's tokens (usage.go)
	mouse     bool  // mouse capture on (mouse.go)
	quitArmed bool
	quitGen   int // numbers the arms, for their expiry ticks
	quitting  bool
	jobsWatch jobsWatch
	spin      int
	ticking   bool

	// waiting is the model call under way, for the status line (status.go).
	waiting requestClock
	// settings: whether the settings files load (settingswarn.go).
	settings settingsWatch
}

// session is the session on screen.
func (m *model) session() *agent.AgentSession { return m.current.Load() }

// newModel builds the screen; send delivers messages to the running
// program (p.Send) and must be safe to call from any goroutine.
func newModel(ctx context.Context, cfg Config, send func(tea.Msg)) (*model, error) {
	if cfg.Models == nil {
		cfg.Models = agent.ModelsOf(nil, "") // no model: bang commands still work
	}
	m := &model{
		cfg:    cfg,
		ctx:    ctx,
		st:     newStyles(cfg.NoColor),
		send:   send,
		tr:     newTranscript(),
		runner: agent.NewRunner(ctx),
		wg:     &sync.WaitGroup{},
	}
	m.pump = newPump(send)
	m.host = newTerminalHost(send)
	m.current.Store(cfg.Session)
	approvals := cfg.Approvals
	approvals.Approver = approver{send: send}
	reg, err := agent.NewTools(agent.ToolsConfig{Current: m.session, Executor: cfg.Executor, Jobs: cfg.Jobs,
		Settings: cfg.ToolSettings, Terminal: m.host, Approvals: approvals})
	if err != nil {
		return nil, err
	}
	m.reg = reg
	m.followTrust(cfg.Settings)

	m.editor = newEditor()
	m.mention = newMention()

	m.tr.notice(kindInfo, welcomeText())
	m.startup() // a resumed conversation, the command line's notice
	return m, nil
}

const placeholder = "Message the agent, or !command to run it in the shell"

// Init implements tea.Model.
func (m *model) Init() tea.Cmd { return m.initialPrompt() }

// Update implements tea.Model.
func (m *model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	cmd := m.route(msg)
	if _, ok := msg.(jobsTickMsg); ok {
		for _, j := range m.jobsWatch.ended(m.cfg.Jobs) {
			m.tr.notice(kindInfo, strings.TrimSuffix(bash.JobSentence(j.ID(), j.State()), ".")+": "+bash.FirstLine(j.Command()))
		}
	}
	if tc := m.jobsWatch.update(msg, m.cfg.Jobs); tc != nil {
		cmd = tea.Batch(cmd, tc)
	}
	if c := m.uncoverApprovals(); c != nil { // approval.go
		cmd = tea.Batch(cmd, c)
	}
	m.menu.filter(m.editor.Value())
	m.mention.follow(m.editor)
	m.layout()
	return m, cmd
}

// layout places the transcript for the next View, after every message:
// View only reads.
func (m *model) layout() {
	if m.width <= 0 || m.height <= 0 {
		return
	}
	m.tr.waitFor(findLayer[*approval](m.layers) != nil) // approval.go
	m.tr.layout(m.width, m.transcriptHeight(), m.st, spinnerFrames[m.spin])
}

// route hands msg to what it is for: input to the top layer (or down the
// stack, to the transcript and the editor), a layer's report to the
// layers, the rest to the model itself.
func (m *model) route(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.resize(msg.Width, msg.Height)
		return m.broadcast(msg)
	case tea.KeyPressMsg, tea.PasteMsg, tea.MouseClickMsg, tea.MouseWheelMsg:
		m.disarmOn(msg)
		if cmd, handled := m.input(msg); handled {
			return cmd
		}
		return m.base(msg)
	case flushMsg:
		m.applyPump()
		return nil
	case mentionFilesMsg:
		m.mention.loaded(msg)
		return nil
	case tickMsg:
		m.spin = (m.spin + 1) % len(spinnerFrames)
		if m.busy() {
			return tick()
		}
		m.ticking = false
		return nil
	case agentDoneMsg:
		m.applyPump()
		m.agentFinished(msg)
		return m.sendQueued(msg.err)
	case compactDoneMsg:
		return m.compactFinished(msg)
	case quitDisarmMsg:
		if msg.gen == m.quitGen {
			m.quitArmed = false
		}
		return nil
	case bangDoneMsg:
		m.applyPump()
		m.bangFinished(msg)
		return nil
	case ptyAttachMsg:
		if ended(msg.s) {
			return nil // it ended before the screen was its
		}
		msg.s.Resize(ptyInnerSize(m.width, m.height))
		m.pushUnderScreens(&overlay{s: msg.s, command: msg.command})
		return m.startTick()
	case ptyChangedMsg:
		return nil // the next View reads the screen
	case trustAskMsg:
		m.askTrust(msg.p)
		return nil
	case trustDoneMsg:
		m.trustDone(msg)
		return nil
	case approvalAskMsg:
		return m.askApproval(msg) // approval.go
	case thinkingCycledMsg:
		m.thinkingCycled(msg) // modelpicker.go
		return nil
	case modelCheckedMsg:
		m.modelChecked(msg) // modelpicker.go
		return nil
	case jobKilledMsg, attachChangedMsg, ptyDoneMsg, sessionsLoadedMsg, approvalGoneMsg, approvalTickMsg, permissionsLoadedMsg, modelsLoadedMsg:
		return m.broadcast(msg) // a layer's own report
	case sessionOpenedMsg:
		m.sessionOpened(msg) // resumecmd.go
		return nil
	}
	return nil
}

// base handles the input no layer took: the transcript's and the editor's.
func (m *model) base(msg tea.Msg) tea.Cmd {
	switch msg := msg.(type) {
	case tea.KeyPressMsg:
		return m.key(msg)
	case tea.PasteMsg:
		m.editor.Paste(msg.Content)
	case tea.MouseClickMsg:
		if msg.Mouse().Button == tea.MouseLeft {
			m.tr.click(msg.Mouse().Y)
		}
	case tea.MouseWheelMsg:
		switch msg.Mouse().Button {
		case tea.MouseWheelUp:
			m.tr.scrollBy(wheelLines)
		case tea.MouseWheelDown:
			m.tr.scrollBy(-wheelLines)
		}
	}
	return nil
}

func (m *model) resize(w, h int) {
	m.width, m.height = w, h
	m.host.setWindow(w, h)
	if m.bangTerm != nil {
		m.bangTerm.Resize(ptyInnerSize(w, h))
	}
	m.editor.SetWidth(max(w-editorFrameW, 1))
}

// key handles a key no layer took: the editor's, and the transcript's.
func (m *model) key(msg tea.KeyPressMsg) tea.Cmd {
	k, km := keyName(msg.String()), keys.Main
	m.flash = ""
	if m.mention.open {
		if handled := m.mentionKey(k); handled {
			return nil
		}
	}
	if c := m.menu.key(k); c != menuPass {
		return m.menuChose(c)
	}
	switch {
	case is(k, km.Quit):
		return m.interruptKey()
	case is(k, km.QuitEmpty):
		if m.editor.Value() == "" {
			return m.requestQuit()
		}
	case is(k, km.Cancel):
		if m.takeBackQueued() {
			return nil
		}
		if !m.runner.Busy() && !m.bangRunning && m.tr.deselect() {
			return nil
		}
		m.abort()
		return nil
	case is(k, km.Expand):
		m.tr.toggle()
		return nil
	case is(k, km.Pager):
		m.openPager()
		return nil
	case is(k, km.Jobs):
		m.openJobsPanel()
		return nil
	case is(k, km.Mouse):
		m.toggleMouse()
		return nil
	case is(k, km.ThinkingLevel):
		return m.cycleThinking()
	case is(k, km.Thinking):
		m.tr.toggleThinking()
		return nil
	case is(k, km.Background):
		if m.moveToBackground() {
			return nil
		}
	case is(k, km.SelectPrev):
		m.tr.selectOutput(-1)
		return nil
	case is(k, km.SelectNext):
		m.tr.selectOutput(1)
		return nil
	case is(k, km.PageUp):
		m.tr.scrollBy(max(m.transcriptHeight()-2, 1))
		return nil
	case is(k, km.PageDown):
		m.tr.scrollBy(-max(m.transcriptHeight()-2, 1))
		return nil
	case is(k, km.Send):
		return m.submit(false)
	case is(k, km.Steer):
		return m.submit(true)
	case is(k, km.HistoryPrev):
		if m.editor.OnFirstRow() && m.recall(-1) {
			return nil
		}
	case is(k, km.HistoryNext):
		if m.editor.OnLastRow() && m.recall(1) {
			return nil
		}
	}
	before := m.editor.Value()
	m.editor.Update(msg)
	m.menu.start(before, m.editor.Value())
	s := m.session()
	return m.mention.refresh(m.ctx, m.editor, s.Cwd(), s.FileSystem())
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
	// The cursor ends at the text's end, as in a shell: typing goes on
	// there, and up on a one-line prompt keeps going back.
	if next == len(m.history) {
		m.editor.SetValue(m.histDraft)
	} else {
		m.editor.SetValue(m.history[next])
	}
	return true
}

// requestQuit quits, after asking when a turn, a `!` command or jobs
// run (quitting stops them: quit aborts the turn and the command, the
// caller closes the job manager).
func (m *model) requestQuit() tea.Cmd {
	if running, _ := jobCounts(m.cfg.Jobs); running > 0 || m.runningWork() != "" {
		m.push(&quitConfirm{running: running, work: m.runningWork()})
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
	m.runner.Abort()
	m.session().AbortBash()
	for _, l := range m.layers {
		if s, ok := l.(stopper); ok {
			s.stop()
		}
	}
}

// abort is esc: the innermost running thing stops (a PTY program's
// overlay takes its own esc).
func (m *model) abort() {
	switch {
	case m.runner.Busy():
		m.runner.Abort()
	case m.bangRunning:
		m.session().AbortBash()
	}
}

func (m *model) busy() bool {
	return m.runner.Busy() || m.bangRunning || findLayer[*overlay](m.layers) != nil
}

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

func (m *model) pushHistory(text string) {
	if n := len(m.history); n == 0 || m.history[n-1] != text {
		m.history = append(m.history, text)
	}
	m.histPos = len(m.history)
	m.histDraft = ""
}

// submit sends the editor's text; while the agent works it is queued: as a
// steer (steer: at the agent's next step) or a follow-up.
func (m *model) submit(steer bool) tea.Cmd {
	text := m.editor.Value()
	trimmed := strings.TrimSpace(text)
	if trimmed == "" {
		return nil
	}
	if c, arg, known, isCmd := parseCommand(trimmed); isCmd {
		// A command runs here and never reaches the model; its answer is
		// read at the end of the transcript.
		m.tr.scrollBy(-m.tr.scroll)
		if known && c.args == "" && arg != "" {
			// "/exit codes are wrong" must not quit: nothing runs and the
			// text stays to be edited.
			m.tr.notice(kindWarning, c.name+" takes no argument.")
			return nil
		}
		m.pushHistory(text)
		m.editor.Reset()
		if !known {
			m.tr.notice(kindWarning, unknownCommandText(c.name))
			return nil
		}
		return c.run(m, arg)
	}
	if strings.HasPrefix(trimmed, "!") {
		excluded := strings.HasPrefix(trimmed, "!!")
		command := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(trimmed, "!"), "!"))
		if command == "" {
			return nil
		}
		if m.bangRunning || m.session().IsBashRunning() {
			// spec §5: refused, and the text stays for after the esc.
			m.tr.notice(kindWarning, agent.ErrBashRunning.Error())
			return nil
		}
		m.pushHistory(text)
		m.editor.Reset()
		return m.startBang(command, excluded)
	}
	if p, _, _ := m.modelNow(); p == nil {
		m.pushHistory(text)
		m.editor.Reset()
		m.tr.add(&textItem{kind: kindUser, text: text})
		m.tr.notice(kindWarning, noModelText(m.cfg.ModelError))
		return nil
	}
	if m.runner.Busy() {
		m.queue(text, steer)
		return nil
	}
	m.pushHistory(text)
	m.editor.Reset()
	m.tr.add(&textItem{kind: kindUser, text: text})
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
	m.tr.addBang(it, m.runner.Busy())
	m.bangGen++
	gen := m.bangGen
	m.bang, m.bangRunning = it, true
	bg := make(chan struct{}) // closed by ctrl+b, even before the command starts
	m.bangBg = bg
	sess, ctx, p, send := m.session(), m.ctx, m.pump, m.send
	term := newBangTerminal(sess, command, send, m.width, m.height)
	m.bangTerm = term
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		run, err := sess.ExecuteBashRun(ctx, command, func(b []byte) { p.chunk(gen, b) },
			agent.BashOptions{ExcludeFromContext: excluded, BackgroundNow: bg, Styled: !m.cfg.NoColor, Terminal: term.view})
		term.end()
		send(bangDoneMsg{gen: gen, res: run.BashResult, settingsErr: run.SettingsError, fullScreen: term.usedFullScreen(), err: err})
	}()
	return m.startTick()
}

func (m *model) bangFinished(msg bangDoneMsg) {
	if msg.gen != m.bangGen || m.bang == nil {
		return
	}
	it := m.bang
	m.bang, m.bangRunning, m.bangBg, m.bangTerm = nil, false, nil, nil
	if msg.err != nil && msg.res.Output == "" && msg.res.ExitCode == nil && !msg.res.Cancelled {
		// Nothing ran: the component would only show an empty result.
		m.tr.remove(it)
		if errors.Is(msg.err, agent.ErrBashRunning) {
			m.tr.notice(kindWarning, msg.err.Error())
			return
		}
		m.tr.notice(kindError, "Bash command failed: "+msg.err.Error())
		return
	}
	m.tr.finishBang(it, msg.res, msg.fullScreen)
	// The command may have fixed the file (`!vim .agentsh/settings.json`):
	// the warning only when it still does not load.
	m.checkSettings()
	switch {
	case msg.settingsErr == "":
	case m.cfg.Settings == nil: // the session follows files the TUI does not
		m.tr.notice(kindWarning, settingsWarning(msg.settingsErr, false))
	case m.settings.err != nil:
		m.tr.notice(kindWarning, settingsWarning(m.settings.err.Error(), !m.cfg.Settings.Loaded()))
	}
	if msg.err != nil {
		// The command ran but recording it failed.
		m.tr.notice(kindError, "Bash command failed: "+msg.err.Error())
	}
}

func (m *model) startPrompt(text string) tea.Cmd {
	provider, modelName, _ := m.modelNow()
	return m.startRun(func(ctx context.Context, sess *agent.AgentSession, reg *tools.Registry, emit func(agent.Event)) error {
		return sess.Prompt(ctx, text, provider, modelName, reg, emit)
	})
}

// startRun runs the agent (a Prompt, or a Continue on the queued
// messages) on the runner; callers start one only when it is free.
func (m *model) startRun(run func(ctx context.Context, sess *agent.AgentSession, reg *tools.Registry, emit func(agent.Event)) error) tea.Cmd {
	sess, p, send, reg := m.session(), m.pump, m.send, m.reg
	sess.SetModels(m.cfg.Models) // the loop reads the model at every call
	m.tr.toolAborted = false
	_, err := m.runner.Start(func(ctx context.Context) error { return run(ctx, sess, reg, p.event) },
		func(r *agent.Run, err error) { send(agentDoneMsg{run: r, err: err}) })
	if err != nil {
		m.tr.notice(kindError, "Error: "+err.Error())
		return nil
	}
	return m.startTick()
}

// agentFinished ends the turn msg reports: the runner is free again.
func (m *model) agentFinished(msg agentDoneMsg) {
	msg.run.End()
	err := msg.err
	aborted := errors.Is(err, context.Canceled)
	// Bang commands that ran meanwhile join the transcript after the turn
	// they interrupted.
	m.tr.endTurn()
	m.checkSettings()
	switch {
	case aborted:
		if !m.tr.toolAborted { // a cancelled tool call says so after its output
			m.tr.notice(kindInfo, "Aborted.")
		}
	case err != nil:
		m.tr.notice(kindError, "Error: "+err.Error())
	}
}

// applyPump brings the streamed state up to date.
func (m *model) applyPump() {
	for _, x := range m.pump.drain() {
		switch v := x.(type) {
		case bangChunk:
			if v.gen == m.bangGen && m.bangRunning && m.bang != nil {
				m.tr.bangOutput(m.bang, v.data)
			}
		case agent.Event:
			m.tr.apply(v, m.session().Cwd)
			m.usage.observe(v, m.contextWindow)
			m.waiting.observe(v, m.tr.clock())
		}
	}
}

// openPager is ctrl+g: the target's full output (its artifact) opens in the
// pager; without a target that has one, the newest truncated block does.
func (m *model) openPager() {
	cand := []item{m.tr.target()}
	if m.tr.selected == nil {
		outs := m.tr.outputs()
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
	m.flash = "No truncated output to view (" + name(keys.Main.Pager) + " opens the full output of a truncated result)."
}

// openArtifact shows artifact id in the pager, or says why it cannot.
func (m *model) openArtifact(id, title string) (problem string) {
	arts := m.session().Artifacts()
	if arts == nil {
		return "No artifact folder: this session keeps no full outputs."
	}
	path, err := arts.Resolve(session.ArtifactScheme + id)
	if err == nil {
		var p *pagerLayer
		if p, err = openPager(path, session.ArtifactScheme+id+" · "+title, m.width, m.height); err == nil {
			m.push(p)
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
	m.push(newJobsPanel(m.cfg.Jobs))
}

// editorFrameW is the editor box's border and padding, left plus right.
const editorFrameW = 4

// editorHeight is the editor box's height (textarea rows + border).
func (m *model) editorHeight() int { return m.editor.Height() + 2 }

// transcriptHeight is the rows left for the transcript above the editor and
// the status line.
func (m *model) transcriptHeight() int {
	return max(m.height-m.editorHeight()-min(m.session().QueuedInputCount(), queueShown+1)-1, 1)
}

// View implements tea.Model.
func (m *model) View() tea.View {
	if m.width <= 0 || m.height <= 0 || m.quitting {
		v := tea.NewView("")
		v.AltScreen = !m.quitting
		return v
	}
	content, cursor := m.screen()
	v := tea.NewView(content)
	v.AltScreen = true
	if m.mouse {
		v.MouseMode = tea.MouseModeCellMotion
	}
	v.Cursor = cursor
	v.WindowTitle = "agentsh"
	return v
}

// mainView is the screen without layers: the transcript, the editor and the
// status line, with the editor's cursor.
func (m *model) mainView() (string, *tea.Cursor) {
	th := m.transcriptHeight()
	editor, edX, edY := m.editorView()
	var b strings.Builder
	b.WriteString(m.withMention(m.withMenu(m.tr.view(), th)))
	b.WriteByte('\n')
	q := m.queueLines()
	for _, l := range q {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	b.WriteString(editor)
	b.WriteByte('\n')
	b.WriteString(m.statusView())
	// The editor's border and padding come before the text.
	return b.String(), tea.NewCursor(edX+editorFrameW/2, th+len(q)+1+edY)
}

// editorView is the editor's box and the cursor within its text.
func (m *model) editorView() (box string, x, y int) {
	text, x, y := m.editor.View(placeholder)
	if m.editor.Value() == "" {
		text = m.st.dim.Render(text)
	}
	style := m.st.editor
	v := strings.TrimLeft(m.editor.Value(), " \t\n")
	switch {
	case strings.HasPrefix(v, "!!"):
		style = m.st.editorBangDim
	case strings.HasPrefix(v, "!"):
		style = m.st.editorBang
	}
	return style.Render(text), x, y
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\n", " ")
	if len([]rune(s)) > 40 {
		s = string([]rune(s)[:39]) + "…"
	}
	return s
}

// moveToBackground makes the running `!` command or the model's running
// bash call a job: it returns with its output so far and goes on (spec
// §9). It reports false when nothing runs.
func (m *model) moveToBackground() bool {
	if !m.bangRunning && !m.runner.Busy() {
		return false
	}
	if m.bangRunning && m.bangBg != nil {
		close(m.bangBg)
		m.bangBg = nil
	}
	m.session().MoveToBackground()
	m.flash = "moved to the background · " + keys.Main.Jobs.Keys()[0] + " shows the jobs"
	return true
}

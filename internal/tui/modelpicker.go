package tui

// /model: a picker of the available models (those of the configured
// providers, Config.Models) as a layer over the transcript; the chosen
// model answers from the next model call. keys.Main.ThinkingLevel cycles
// the thinking level. Both are saved in the session file, so a resumed
// session continues with them.

import (
	"fmt"
	"strings"
	"time"
	"unicode"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/llm"
)

// modelsLoadedMsg carries the available models to the picker.
type modelsLoadedMsg struct{ models []agent.Model }

// thinkingCycledMsg carries the thinking level after a cycle; ok is false
// when the model cannot think.
type thinkingCycledMsg struct {
	level string
	ok    bool
}

// switchModel is the picker's action (see layers.go): use model from now.
type switchModel struct{ model agent.Model }

// modelPicker lists the available models; the current one is marked and
// selected first.
type modelPicker struct {
	models  []agent.Model
	loaded  bool
	sel     int
	current string // "provider/id" of the model in use
}

func (p *modelPicker) update(msg tea.Msg) (action, tea.Cmd) {
	switch msg := msg.(type) {
	case modelsLoadedMsg:
		p.models, p.loaded = msg.models, true
		for i, md := range p.models {
			if md.Spec() == p.current {
				p.sel = i
			}
		}
	case tea.KeyPressMsg:
		k := keys.Models
		var moved bool
		if p.sel, moved = k.move(msg, p.sel, len(p.models)); moved {
			return nil, nil
		}
		switch {
		case key.Matches(msg, k.Cancel):
			return closeLayer{}, nil
		case key.Matches(msg, k.Choose):
			if len(p.models) > 0 {
				return switchModel{model: p.models[p.sel]}, nil
			}
		}
	}
	return nil, nil // a paste or a click goes nowhere while the list shows
}

// modelPickerHelp is the picker's footer.
func modelPickerHelp() string {
	k := keys.Models
	return helpLine(entry{Key: name(k.Up) + name(k.Down), Desc: "select"}, help(k.Choose), help(k.Cancel))
}

func (p *modelPicker) view(width, height int, st *styles) surface {
	lines := make([]string, 0, height)
	add := func(s string) {
		if ansi.StringWidth(s) > width {
			s = ansi.Truncate(s, width, "…")
		}
		lines = append(lines, s)
	}
	cur := p.current
	if cur == "" {
		cur = "none"
	}
	add(st.overlayTitle.Render("Switch model") + st.dim.Render(" · now "+cur))
	add("")
	switch {
	case !p.loaded:
		add(st.dim.Render("Asking the providers for their models…"))
	case len(p.models) == 0:
		add(st.dim.Render("No model available: set a provider's key (providers: " + strings.Join(llm.Providers, ", ") + ")."))
	default:
		specW := 0
		for _, md := range p.models {
			specW = max(specW, ansi.StringWidth(md.Spec()))
		}
		listH := max(height-len(lines)-2, 1)
		first := min(max(p.sel-listH+1, 0), max(len(p.models)-listH, 0))
		for i := first; i < min(first+listH, len(p.models)); i++ {
			md := p.models[i]
			mark := "  "
			if i == p.sel {
				mark = "› "
			}
			row := mark + md.Spec() + strings.Repeat(" ", specW-ansi.StringWidth(md.Spec())) + "  " + modelFacts(md)
			if md.Spec() == p.current {
				row += "  (current)"
			}
			add(pickerRow(row, width, i == p.sel, st))
		}
	}
	return surface{content: pickerFrame(lines, width, height, st.dim.Render(modelPickerHelp()))}
}

func (p *modelPicker) covers() bool { return true }

// modelFacts is what the picker says of a model: its context window and
// whether it thinks.
func modelFacts(md agent.Model) string {
	var facts []string
	if md.ContextWindow > 0 {
		facts = append(facts, tokensShort(md.ContextWindow)+" context")
	}
	if md.Reasoning {
		facts = append(facts, "thinks")
	}
	return strings.Join(facts, " · ")
}

// tokensShort is n as 128k or 1M.
func tokensShort(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("%dM", n/1_000_000)
	case n >= 1_000_000:
		return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
	case n >= 1000:
		return fmt.Sprintf("%dk", (n+500)/1000)
	}
	return fmt.Sprint(n)
}

// openModelPicker is /model without a word: the picker, with the models
// asked of the providers in a command.
func (m *model) openModelPicker() tea.Cmd {
	ms := m.cfg.Models
	m.push(&modelPicker{current: ms.Spec()})
	ctx := m.ctx
	return func() tea.Msg { return modelsLoadedMsg{models: ms.Available(ctx)} }
}

// modelChosen switches to the picker's choice.
func (m *model) modelChosen(md agent.Model) {
	if err := m.cfg.Models.Use(md.Provider, md.ID); err != nil {
		m.tr.notice(kindError, "Model unchanged: "+err.Error())
		return
	}
	m.modelSwitched(md.Spec())
}

// modelSwitched says that the model is now spec and records it.
func (m *model) modelSwitched(spec string) {
	m.cfg.ModelError = ""
	note := "Model: " + spec
	if m.runner.Busy() {
		note += " from the next model call"
	}
	m.tr.notice(kindInfo, note+".")
	m.recordModel()
}

// recordModel writes the model and thinking level to the session file.
func (m *model) recordModel() {
	if err := m.session().RecordModelsOf(m.cfg.Models); err != nil {
		m.tr.notice(kindWarning, "The session file did not take the change: "+err.Error())
	}
}

// cycleThinking is keys.Main.ThinkingLevel: the next thinking level, found
// in a command (whether the model thinks may be asked of its provider).
func (m *model) cycleThinking() tea.Cmd {
	ms, ctx := m.cfg.Models, m.ctx
	return func() tea.Msg {
		level, ok := ms.CycleThinkingLevel(ctx)
		return thinkingCycledMsg{level: level, ok: ok}
	}
}

// thinkingCycled shows the new level.
func (m *model) thinkingCycled(msg thinkingCycledMsg) {
	if !msg.ok {
		m.flash = "This model does not think"
		return
	}
	m.flash = "Thinking: " + msg.level
	m.recordModel()
}

// modelNow is the model prompts go to: its provider (nil: none), the name
// the requests carry, and the status line's label.
func (m *model) modelNow() (llm.Provider, string, string) {
	if p, id := m.cfg.Models.Provider(); p != nil {
		return p, id, p.Name() + "/" + id
	}
	return nil, "", m.cfg.ModelLabel
}

// thinkingStatus is the status line's thinking level ("" when off).
func (m *model) thinkingStatus() string {
	if l := m.cfg.Models.ThinkingLevel(); l != llm.ThinkingOff {
		return "thinking " + l
	}
	return ""
}

// cmdModel is /model: without a word the picker, with "provider/name" a
// switch to it once the provider's model list (asked in a command) holds
// the name; a provider that lists nothing cannot say, and the switch goes
// ahead unchecked.
func (m *model) cmdModel(arg string) tea.Cmd {
	if arg == "" {
		return m.openModelPicker()
	}
	_, _, current := m.modelNow()
	p, id, err := llm.ParseModel(arg)
	if err != nil {
		m.tr.notice(kindError, "Model unchanged ("+current+"): "+err.Error())
		return nil
	}
	ms, ctx := m.cfg.Models, m.ctx
	m.flash = "asking " + p + " for its models…"
	return func() tea.Msg {
		found, listed := ms.Lookup(ctx, p, id)
		msg := modelCheckedMsg{provider: p, id: id, found: found, listed: listed}
		if !found && listed {
			msg.close = closeModels(ms.Available(ctx), p, id)
		}
		return msg
	}
}

// modelCheckedMsg is a /model name checked against its provider's list;
// close are listed names like it, for a name that is not listed.
type modelCheckedMsg struct {
	provider, id  string
	found, listed bool
	close         []string
}

// closeModels are up to three of provider's models whose ids hold id, or
// id theirs, with case and punctuation aside ("gpt4o" finds gpt-4o).
func closeModels(models []agent.Model, provider, id string) []string {
	norm := func(s string) string {
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return unicode.ToLower(r)
			}
			return -1
		}, s)
	}
	want := norm(id)
	var out []string
	for _, md := range models {
		if got := norm(md.ID); md.Provider == provider && want != "" && got != "" &&
			(strings.Contains(got, want) || strings.Contains(want, got)) && len(out) < 3 {
			out = append(out, md.Spec())
		}
	}
	return out
}

// modelChecked switches to a checked /model name, or says why not.
func (m *model) modelChecked(msg modelCheckedMsg) {
	m.flash = ""
	_, _, current := m.modelNow()
	spec := msg.provider + "/" + msg.id
	if !msg.found && msg.listed {
		like := ""
		if len(msg.close) > 0 {
			like = " (like it: " + strings.Join(msg.close, ", ") + ")"
		}
		m.tr.notice(kindError, "Model unchanged ("+current+"): "+msg.provider+" does not list "+spec+like+
			" · /model alone shows the models to choose from")
		return
	}
	if err := m.cfg.Models.Use(msg.provider, msg.id); err != nil {
		m.tr.notice(kindError, "Model unchanged ("+current+"): "+err.Error())
		return
	}
	m.modelSwitched(spec)
	if !msg.found {
		m.tr.notice(kindWarning, msg.provider+" gives no list of its models: the name "+msg.id+" was not checked.")
	}
}

// retryNotice says that a model call failed and is tried again.
func retryNotice(e agent.Event) string {
	return fmt.Sprintf("%s · trying again in %s (%d of %d; %s gives up)", e.ErrorMessage,
		time.Duration(e.DelayMs)*time.Millisecond, e.Attempt, e.MaxAttempts, name(keys.Main.Cancel))
}

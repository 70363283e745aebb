package tui

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/llm"
	"agentsh/internal/testkit"
	"agentsh/internal/tools"
)

// screenSizes are the two terminal sizes every golden screen is taken at.
var screenSizes = [][2]int{{60, 30}, {100, 36}}

// checkScreen compares a whole screen with testdata/<name>.golden, after
// checking that it has exactly the terminal's rows, none wider than it.
func checkScreen(t *testing.T, name, screen string, w, h int) {
	t.Helper()
	lines := strings.Split(screen, "\n")
	if len(lines) != h {
		t.Errorf("%s: %d rows, want %d", name, len(lines), h)
	}
	for i, l := range lines {
		if sw := ansi.StringWidth(l); sw > w {
			t.Errorf("%s: row %d is %d cells wide, limit %d: %q", name, i, sw, w, l)
		}
	}
	testkit.Golden(t, name+".golden", screen+"\n")
}

// goldenHarness is a harness whose status line is the same on every
// machine: the session cwd shows as ~/work.
func goldenHarness(t *testing.T, w, h int, color bool) *harness {
	hs := newHarnessWith(t, w, h, false, color)
	t.Setenv("HOME", filepath.Dir(hs.m.cfg.Session.Cwd()))
	return hs
}

func truncatedCall(h *harness) {
	args := json.RawMessage(`{"command":"go test ./...","timeout":120}`)
	end := h.holdTurn()
	h.m.pump.event(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "t1", ToolName: tools.BashName, Args: args})
	var out strings.Builder
	for i := 1; i <= 40; i++ {
		out.WriteString("ok  \tagentsh/pkg" + strings.Repeat("x", i%7) + "\t0.01s\n")
	}
	details, _ := json.Marshal(bash.ToolDetails{Meta: &bash.OutputMeta{Truncation: &bash.TruncationMeta{
		TruncatedBy: "lines", TotalLines: 5000, OutputLines: 41, ShownRange: bash.ShownRange{Start: 4960, End: 5000},
		ArtifactID: "3"}}})
	h.m.pump.event(agent.Event{Type: agent.EventToolExecutionEnd, ToolCallID: "t1", ToolName: tools.BashName,
		Result: &tools.Result{Content: out.String() + "FAIL\n\nCommand exited with code 1", IsError: true, Details: details}})
	h.update(flushMsg{})
	end()
}

func TestGoldenScreens(t *testing.T) {
	scenes := []struct {
		name  string
		color bool
		setup func(h *harness)
	}{
		{"welcome", false, func(h *harness) {}},
		{"slash_menu", false, func(h *harness) {
			h.add(&textItem{kind: kindAssistant, text: "An earlier answer."})
			h.typeText("/")
			h.press(tea.KeyDown, 0)
		}},
		{"editor_bang", true, func(h *harness) { h.typeText("!make test") }},
		{"editor_bang_excluded", true, func(h *harness) { h.typeText("!!git status") }},
		{"no_model", false, func(h *harness) {
			h.typeText("fix the tests")
			h.press(tea.KeyEnter, 0)
		}},
		{"conversation", false, func(h *harness) {
			h.add(&textItem{kind: kindUser, text: "why do the tests fail?"})
			h.add(&textItem{kind: kindAssistant, text: "## Cause\n\nThe **parser** drops `\\t`:\n\n- first\n- second"})
			truncatedCall(h)
			b := finishedBang("sleep 100", 1, 0)
			b.bang.Finish("", nil, true, nil)
			h.add(b)
		}},
		{"conversation_color", true, func(h *harness) {
			h.add(&textItem{kind: kindUser, text: "why do the tests fail?"})
			h.add(&textItem{kind: kindAssistant, text: "## Cause\n\nThe **parser** drops `\\t`."})
			truncatedCall(h)
		}},
		{"selected_expanded", false, func(h *harness) {
			h.add(finishedBang("seq 1 30", 1, 30))
			h.add(finishedBang("seq 2", 1, 2))
			h.press(tea.KeyUp, tea.ModAlt)
			h.press(tea.KeyUp, tea.ModAlt)
			h.press('o', tea.ModCtrl)
		}},
		{"usage", false, func(h *harness) {
			h.m.cfg.Models = agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{}), "gpt-4o")
			reportUsage(h, 15000, 360)
		}},
		{"scrolled", false, func(h *harness) {
			h.add(finishedBang("seq 1 30", 1, 30))
			h.press('o', tea.ModCtrl)
			h.press(tea.KeyPgUp, 0)
		}},
	}
	for _, sc := range scenes {
		for _, sz := range screenSizes {
			h := goldenHarness(t, sz[0], sz[1], sc.color)
			sc.setup(h)
			screen := h.m.View().Content
			if !sc.color {
				screen = ansi.Strip(screen)
			}
			checkScreen(t, sc.name+"_"+strconv.Itoa(sz[0])+"x"+strconv.Itoa(sz[1]), screen, sz[0], sz[1])
		}
	}
}

package tui

// Frame benchmarks for the goal "a transcript of 1,000 tool results
// renders in ≤ 5 ms per frame" (docs/BENCHMARKS.md §C): a model at 120×40
// holding 1,000 finished tool calls (short, collapsed and expanded long
// outputs, some errors), 100 bang blocks and 100 user/assistant turns, and
// the cost of View in the cases the program meets:
//
//   - steady: nothing changed (every visible item is a cache hit);
//   - key: a printable key reaches the editor;
//   - tick: the spinner advances while a tool call runs (its block changes);
//   - stream-tool / stream-bang / stream-answer: a flush brings a new chunk
//     of the running tool call, bang command or assistant answer (the
//     pump's path, Update(flushMsg) then View);
//   - resize: the width alternates between 120 and 119, so every item's
//     cache is stale (the worst case for the visible items);
//   - scrolled-middle: pgup until the middle of the transcript, then View
//     (half the transcript lies between the screen and the bottom);
//   - scrolled-middle-resize: both at once.
//
// budget-x is the time per frame over the 5 ms budget, p99-us and max-us
// the slowest single frames; views/op counts how many tool items the frame
// asked for their view.

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	uv "github.com/charmbracelet/ultraviolet"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/render"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

const (
	benchW, benchH = 120, 40
	benchTools     = 1000
	frameBudgetNs  = 5e6
)

// newBenchModel is a model at benchW×benchH with the benchmark transcript.
// Background goroutines' messages are dropped: the benchmarks drive Update
// themselves.
func newBenchModel(b *testing.B) *model {
	b.Helper()
	root := b.TempDir()
	for _, kv := range [][2]string{{"HOME", "home"}, {"XDG_DATA_HOME", "data"}, {"XDG_CONFIG_HOME", "config"}, {"", "work"}} {
		dir := filepath.Join(root, kv[1])
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		if kv[0] != "" {
			b.Setenv(kv[0], dir)
		}
	}
	ex := bash.NewExecutor()
	b.Cleanup(func() { ex.Close() })
	sess, err := agent.New(filepath.Join(root, "work"), nil, ex, bash.ShellConfig{Path: "/bin/sh"})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(cancel)
	m, err := newModel(ctx, Config{Session: sess, Executor: ex, ModelLabel: "openai/bench"}, func(tea.Msg) {})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(m.pump.close)
	m.Update(tea.WindowSizeMsg{Width: benchW, Height: benchH})
	fillTranscript(m)
	m.layout()
	m.View()
	return m
}

// benchOutput is n lines of tool output; wide lines wrap at 120 columns.
func benchOutput(i, n int, wide bool) string {
	var b strings.Builder
	for j := range n {
		b.WriteString("ok  \tagentsh/internal/pkg")
		b.WriteString(strconv.Itoa(i))
		b.WriteString("/file_")
		b.WriteString(strconv.Itoa(j))
		b.WriteString(".go:42: value ")
		if wide {
			b.WriteString(strings.Repeat("0123456789abcdef ", 10))
		}
		b.WriteByte('\n')
	}
	return b.String()
}

const benchAnswer = "Here is what I found in **internal/tui**:\n\n" +
	"- `model.go` keeps the transcript and only renders what is visible;\n" +
	"- the editor lives in `editor.go`.\n\n" +
	"```go\nfunc (m *model) View() tea.View {\n\treturn m.render()\n}\n```\n\n" +
	"Run `go test ./internal/tui/` to check."

// fillTranscript appends the benchmark transcript: benchTools finished
// tool calls, a user/assistant turn and a bang block before every tenth.
func fillTranscript(m *model) {
	code1 := 1
	for i := range benchTools {
		c := &render.ToolCall{Command: "go test ./internal/pkg" + strconv.Itoa(i) + "/...", TimeoutSeconds: float64(i % 3 * 60)}
		switch i % 4 {
		case 0: // short
			c.Output = benchOutput(i, 3, false)
		case 1: // collapsed to its last 10 lines
			c.Output = benchOutput(i, 40, false)
		case 2: // long (~43 KB, under the tool's 50 KiB cap), wrapping lines
			c.Output = benchOutput(i, 200, true)
		case 3: // error
			c.Output = benchOutput(i, 12, false) + "\nCommand exited with code 1"
			c.IsError = true
		}
		if i%10 == 2 {
			c.Expanded = true // 400 rows on screen
		}
		if i%50 == 6 {
			c.Truncation = &bash.TruncationMeta{}
		}
		if i%10 == 0 {
			m.tr.add(&textItem{kind: kindUser, text: "please look at package " + strconv.Itoa(i) + " and fix the failing test"})
			m.tr.add(&textItem{kind: kindAssistant, text: benchAnswer})
			bg := render.NewBang("ls -la src/"+strconv.Itoa(i), i%20 == 10)
			out := benchOutput(i, 30, false)
			bg.Append(out)
			bg.Finish(out, &code1, false, nil)
			m.tr.add(&bangItem{bang: bg})
		}
		m.tr.add(&toolItem{id: "call_" + strconv.Itoa(i), call: c})
	}
}

// toolViews sums how often tool items were asked for their view.
func toolViews(m *model) int {
	n := 0
	for _, it := range m.tr.items {
		if t, ok := it.(*toolItem); ok {
			n += t.views
		}
	}
	return n
}

// benchFrames runs frame once per iteration and reports, besides ns/op:
// budget-x (ns/op over the 5 ms budget), p99-us and max-us of the single
// frames (a throttled or cached renderer shows up here, not in the mean)
// and views/op.
func benchFrames(b *testing.B, m *model, frame func(i int)) {
	v0 := toolViews(m)
	d := make([]time.Duration, 0, 1<<16)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		t0 := time.Now()
		frame(i)
		if len(d) < cap(d) {
			d = append(d, time.Since(t0))
		}
		i++
	}
	slices.Sort(d)
	us := func(x time.Duration) float64 { return float64(x) / float64(time.Microsecond) }
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/frameBudgetNs, "budget-x")
	b.ReportMetric(us(d[min(len(d)*99/100, len(d)-1)]), "p99-us")
	b.ReportMetric(us(d[len(d)-1]), "max-us")
	b.ReportMetric(float64(toolViews(m)-v0)/float64(b.N), "views/op")
}

// scrollToMiddle presses pgup until half the transcript's rows are below
// the screen.
func scrollToMiddle(b *testing.B, m *model) {
	b.Helper()
	rows := 0
	for _, it := range m.tr.items {
		if s := it.view(m.width, m.st, spinnerFrames[m.spin]); s != "" {
			rows += strings.Count(s, "\n") + 2
		}
	}
	page := max(m.transcriptHeight()-2, 1)
	for m.tr.scroll < rows/2 {
		m.Update(tea.KeyPressMsg{Code: tea.KeyPgUp})
	}
	m.View()
	if m.tr.scroll < rows/2-page {
		b.Fatalf("scrolled %d of %d rows", m.tr.scroll, rows)
	}
	if !strings.Contains(m.View().Content, "more lines below") {
		b.Fatal("no scroll indicator")
	}
}

func BenchmarkTranscriptView(b *testing.B) {
	b.Run("steady", func(b *testing.B) {
		m := newBenchModel(b)
		benchFrames(b, m, func(int) { m.View() })
	})

	b.Run("key", func(b *testing.B) {
		m := newBenchModel(b)
		benchFrames(b, m, func(i int) {
			if i%100 == 99 {
				m.editor.Reset() // keep the editor on one row
			}
			r := rune('a' + i%26)
			m.Update(tea.KeyPressMsg{Code: r, Text: string(r)})
			m.View()
		})
	})

	b.Run("tick", func(b *testing.B) {
		m := newBenchModel(b)
		startTool(b, m, benchOutput(0, 50, false))
		benchFrames(b, m, func(int) {
			m.Update(tickMsg{})
			m.View()
		})
	})

	b.Run("stream-tool", func(b *testing.B) {
		m := newBenchModel(b)
		live := benchOutput(0, 50, false)
		startTool(b, m, live)
		benchFrames(b, m, func(i int) {
			// The tool's update carries the whole live tail, as the bash
			// tool sends it; keep ~50 lines.
			live = live[strings.IndexByte(live, '\n')+1:] + "line " + strconv.Itoa(i) + " of the build\n"
			m.pump.event(agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: "live", ToolName: tools.BashName, PartialResult: live})
			m.Update(flushMsg{})
			m.View()
		})
	})

	b.Run("stream-bang", func(b *testing.B) {
		m := newBenchModel(b)
		it := &bangItem{bang: render.NewBang("yes", false)}
		m.tr.add(it)
		m.bangGen++
		m.bang, m.bangRunning = it, true
		chunk := []byte(strings.Repeat("y\n", 8<<10)) // 16 KiB, a frame of `yes`
		benchFrames(b, m, func(int) {
			m.pump.chunk(m.bangGen, chunk)
			m.Update(flushMsg{})
			m.View()
		})
		if !strings.Contains(m.View().Content, "Running…") {
			b.Fatal("the bang block is not on the screen")
		}
	})

	b.Run("stream-answer", func(b *testing.B) {
		m := newBenchModel(b)
		holdRun(b, m)
		m.pump.event(agent.Event{Type: agent.EventMessageStart, Message: &session.AssistantMessage{}})
		m.Update(flushMsg{})
		text := ""
		benchFrames(b, m, func(int) {
			if len(text) > 4000 {
				text = ""
			}
			text += "Some more words of the answer, with `code` and **bold**. "
			if len(text)%7 == 0 {
				text += "\n\n"
			}
			m.pump.event(agent.Event{Type: agent.EventMessageUpdate, UpdateKind: agent.UpdateTextDelta,
				Message: &session.AssistantMessage{Text: text}})
			m.Update(flushMsg{})
			m.View()
		})
	})

	b.Run("resize", func(b *testing.B) {
		m := newBenchModel(b)
		m.Update(tea.WindowSizeMsg{Width: benchW - 1, Height: benchH})
		m.View() // both widths seen once
		benchFrames(b, m, func(i int) {
			m.Update(tea.WindowSizeMsg{Width: benchW - i%2, Height: benchH})
			m.View()
		})
	})

	b.Run("scrolled-middle", func(b *testing.B) {
		m := newBenchModel(b)
		scrollToMiddle(b, m)
		benchFrames(b, m, func(int) { m.View() })
	})

	b.Run("scrolled-middle-resize", func(b *testing.B) {
		m := newBenchModel(b)
		scrollToMiddle(b, m)
		m.Update(tea.WindowSizeMsg{Width: benchW - 1, Height: benchH})
		m.View()
		benchFrames(b, m, func(i int) {
			m.Update(tea.WindowSizeMsg{Width: benchW - i%2, Height: benchH})
			m.View()
		})
	})
}

// startTool puts a running tool call at the end of the transcript, as the
// agent's events would.
func startTool(b *testing.B, m *model, live string) {
	holdRun(b, m)
	m.pump.event(agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: "live", ToolName: tools.BashName,
		Args: []byte(`{"command":"make test"}`)})
	m.pump.event(agent.Event{Type: agent.EventToolExecutionUpdate, ToolCallID: "live", ToolName: tools.BashName, PartialResult: live})
	m.Update(flushMsg{})
	m.View()
}

// BenchmarkFrameDraw is what Bubble Tea's renderer does with a changed
// frame before diffing it against the terminal: parse the View's content
// into a cell buffer. It is not part of the 5 ms budget of View but of
// every changed frame's cost.
func BenchmarkFrameDraw(b *testing.B) {
	m := newBenchModel(b)
	content := m.View().Content
	buf := uv.NewScreenBuffer(benchW, benchH)
	area := uv.Rect(0, 0, benchW, benchH)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		uv.NewStyledString(content).Draw(buf, area)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/frameBudgetNs, "budget-x")
}

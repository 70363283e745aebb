package tui

import (
	"strconv"
	"strings"
	"time"

	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/render"
	"agentsh/internal/session"
)

// transcript is the conversation on the screen: its items, the bang
// commands that ran while the agent streamed (shown after its turn), the
// state of the turn streaming now, the selected output block and the scroll
// position. It changes only through its methods, which Update calls; layout
// (also called from Update) places it on the screen, and view only reads
// what layout left.
type transcript struct {
	items   []item
	pending []item // bang commands started while the agent streams (spec §5)

	assistant *textItem     // the answer streaming now
	thinking  *thinkingItem // its thinking, once some came (thinking.go)
	// showThinking: every thinking block is shown in full, not as its
	// first words.
	showThinking bool
	tools        map[string]*toolItem // the turn's running tool calls by id
	// toolAborted: a tool call of the turn shows that it was cancelled, so
	// the turn's end says nothing more.
	toolAborted bool
	// compacting: an automatic compaction runs (between two model calls).
	compacting bool
	// retry is the notice of the model call being tried again: the next
	// try's replaces its text, and a try that succeeds removes it.
	retry *textItem

	selected item // the output block ctrl+o and ctrl+g act on; nil: the latest
	scroll   int  // lines scrolled up from the bottom; 0 follows new output
	// anchor pins the transcript line at the top of the screen while
	// scrolled up, so output streaming in below does not move what is read.
	anchor    item
	anchorOff int

	// dirty: something changed since the last layout.
	dirty bool
	// What the last layout was for, and what it left: the screen's rows
	// and where each visible item went (for clicks).
	width, height int
	st            *styles
	spinner       string
	text          string
	placed        []placed

	// clock is the time running blocks count their elapsed time against
	// (tests fix it); now is the second the last layout was for.
	clock func() time.Time
	now   time.Time
}

// placed is an item's rows on the screen, [top, bottom).
type placed struct {
	it          item
	top, bottom int
}

func newTranscript() *transcript {
	return &transcript{tools: map[string]*toolItem{}, dirty: true, clock: time.Now}
}

// add appends it and follows the end.
func (t *transcript) add(it item) {
	if th, ok := it.(*thinkingItem); ok {
		th.show = &t.showThinking
	}
	t.items = append(t.items, it)
	t.scroll = 0
	t.dirty = true
}

func (t *transcript) notice(kind textKind, text string) {
	t.add(&textItem{kind: kind, text: text})
}

// addBang shows a bang command that starts now: after the turn it
// interrupts when the agent is streaming (spec §5), else at the end.
func (t *transcript) addBang(it *bangItem, agentRunning bool) {
	it.started = t.clock()
	if agentRunning {
		t.pending = append(t.pending, it)
	} else {
		t.items = append(t.items, it)
	}
	t.scroll = 0
	t.dirty = true
}

// bangOutput is live output of a running bang command.
func (t *transcript) bangOutput(it *bangItem, data string) {
	it.bang.Append(data)
	t.dirty = true
}

// finishBang shows a bang command's result: its end, or the job it became;
// fullScreen: the program used the alternate screen, and the result is its
// last screen, which the collapsed block leaves out.
func (t *transcript) finishBang(it *bangItem, res bash.BashResult, fullScreen bool) {
	var trunc *bash.TruncationMeta
	if meta := bash.ResultMeta(res); meta != nil {
		trunc = meta.Truncation
	}
	if j := res.Job; j != nil {
		// It waits for input or the user moved it: not an end, a job.
		it.bang.FinishAsJob(res.Output, j.ID(), trunc)
	} else {
		it.bang.Styled, it.bang.FullScreen = res.Styled, fullScreen
		it.bang.Finish(res.Output, res.ExitCode, res.Cancelled, trunc)
	}
	t.dirty = true
}

func (t *transcript) remove(it item) {
	for _, list := range []*[]item{&t.items, &t.pending} {
		for i, x := range *list {
			if x == it {
				*list = append((*list)[:i], (*list)[i+1:]...)
				t.dirty = true
				return
			}
		}
	}
}

// runningTools is how many tool calls of the turn are running.
func (t *transcript) runningTools() int { return len(t.tools) }

// waitFor marks the turn's running calls as waiting for the user's answer
// (on) or running again: the block of a call the approval question is
// about says so. Marking is idempotent, so the model calls it before every
// layout.
func (t *transcript) waitFor(on bool) {
	for _, it := range t.tools {
		switch {
		case it.file != nil && it.file.Waiting != on:
			it.file.Waiting, t.dirty = on, true
		case it.call != nil && !it.call.Streaming && it.call.Waiting != on:
			it.call.Waiting, t.dirty = on, true
		}
	}
}

// endTurn closes the agent's turn: its calls stop running and the bang
// commands that ran meanwhile join the transcript after it.
func (t *transcript) endTurn() {
	t.assistant, t.thinking, t.retry = nil, nil, nil
	for id, it := range t.tools {
		switch {
		case it.placeholder:
			t.remove(it) // never ran
		case it.call != nil && it.call.Streaming:
			t.remove(it) // the model never finished writing it: nothing ran
		default:
			it.block().Finish(nil)
		}
		delete(t.tools, id)
	}
	t.items = append(t.items, t.pending...)
	t.pending = nil
	t.dirty = true
}

// apply brings an agent event into the transcript; cwd is the session's
// directory, against which a call's cwd is shown.
func (t *transcript) apply(e agent.Event, cwd func() string) {
	t.dirty = true
	switch e.Type {
	case agent.EventAutoCompactionStart, agent.EventAutoCompactionEnd:
		t.applyCompaction(e)
	case agent.EventMessageStart:
		// User messages and tool results are reported too (the
		// reference's events); the transcript already shows them, but
		// for the queued messages, shown as they join.
		if u, ok := e.Message.(*session.UserMessage); ok && u.Queued {
			t.add(&textItem{kind: kindUser, text: u.Text})
			return
		}
		if _, ok := e.Message.(*session.AssistantMessage); !ok && e.Message != nil {
			return
		}
		t.assistant = &textItem{kind: kindAssistant, live: true}
		t.add(t.assistant)
	case agent.EventMessageUpdate, agent.EventMessageEnd:
		am, isAnswer := e.Message.(*session.AssistantMessage)
		if !isAnswer && e.Message != nil {
			return // a user message's or tool result's end
		}
		if isAnswer && t.assistant != nil {
			t.assistant.text = strings.TrimSpace(am.Text)
			t.streamThinking(am)
		}
		t.streamToolCall(e)
		if e.Type == agent.EventMessageEnd && t.assistant != nil {
			t.thinking = nil
			t.assistant.live = false
			if t.assistant.text == "" {
				t.remove(t.assistant)
			}
			t.assistant = nil
		}
	case agent.EventAutoRetryStart:
		if t.retry != nil {
			t.remove(t.retry)
		}
		t.retry = &textItem{kind: kindWarning, text: retryNotice(e)}
		t.add(t.retry)
	case agent.EventAutoRetryEnd:
		// A failure keeps the notice: it tells what was tried before the
		// error that ends the turn.
		if e.Success && t.retry != nil {
			t.remove(t.retry)
		}
		t.retry = nil
	case agent.EventToolExecutionStart:
		it := t.tools[e.ToolCallID] // shown while its arguments streamed
		if it == nil {
			it = &toolItem{id: e.ToolCallID}
			t.tools[e.ToolCallID] = it
			t.add(it)
		}
		it.started, it.args, it.placeholder = t.clock(), nil, false
		v := render.NewToolView(render.Call{Name: e.ToolName, Args: e.Args}, nil, render.ToolOptions{Cwd: cwd()})
		b := render.NewToolBlock(&v, true)
		it.call, it.file = b.Call, b.File
	case agent.EventToolExecutionUpdate:
		if it := t.tools[e.ToolCallID]; it != nil && it.call != nil {
			// With a UI the snapshot keeps the output's colours.
			it.call.Output, it.call.Styled = e.PartialResult, e.PartialResult
		}
	case agent.EventToolExecutionEnd:
		it := t.tools[e.ToolCallID]
		if it == nil || e.Result == nil {
			return
		}
		delete(t.tools, e.ToolCallID)
		t.toolAborted = t.toolAborted || e.Result.Aborted
		r := render.NewResultView(render.Result{Content: e.Result.Content, Details: e.Result.Details, IsError: e.Result.IsError}, render.ToolOptions{})
		it.block().Finish(&r)
	}
}

// all is every item in screen order: the transcript, then the pending bang
// commands.
func (t *transcript) all() []item {
	all := make([]item, 0, len(t.items)+len(t.pending))
	all = append(all, t.items...)
	return append(all, t.pending...)
}

// outputs lists the transcript's output blocks (tool calls and bang
// commands), oldest first.
func (t *transcript) outputs() []item {
	var out []item
	for _, list := range [][]item{t.items, t.pending} {
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
func (t *transcript) target() item {
	if t.selected != nil {
		return t.selected
	}
	outs := t.outputs()
	if len(outs) == 0 {
		return nil
	}
	return outs[len(outs)-1]
}

// toggle is ctrl+o: the target switches between its collapsed preview and
// the full output.
func (t *transcript) toggle() {
	switch v := t.target().(type) {
	case *toolItem:
		v.toggle()
	case *bangItem:
		v.bang.Expanded = !v.bang.Expanded
	default:
		return
	}
	t.dirty = true
	if t.selected != nil {
		t.reveal(t.selected)
	}
}

// selectOutput moves the selection to the previous (dir -1) or next output
// block and scrolls it into view; moving past the newest clears it.
func (t *transcript) selectOutput(dir int) {
	outs := t.outputs()
	if len(outs) == 0 {
		return
	}
	t.dirty = true
	idx := len(outs) // none selected: as if just past the newest
	for i, it := range outs {
		if it == t.selected {
			idx = i
		}
	}
	idx += dir
	switch {
	case idx < 0:
		idx = 0
	case idx >= len(outs):
		t.selected = nil
		t.scroll, t.anchor = 0, nil
		return
	}
	t.selected = outs[idx]
	t.reveal(t.selected)
}

// deselect clears the selection; it reports whether there was one.
func (t *transcript) deselect() bool {
	if t.selected == nil {
		return false
	}
	t.selected = nil
	t.dirty = true
	return true
}

// click selects the output block under screen row y of the last layout;
// clicking the selected block again expands or collapses it.
func (t *transcript) click(y int) {
	for _, p := range t.placed {
		if y < p.top || y >= p.bottom {
			continue
		}
		switch p.it.(type) {
		case *toolItem, *bangItem:
			if t.selected == p.it {
				t.toggle()
			} else {
				t.selected = p.it
				t.dirty = true
			}
		}
		return
	}
}

// reveal scrolls so that target is on screen: its bottom at the bottom of
// the transcript, or its top at the top when it is taller than the screen.
func (t *transcript) reveal(target item) {
	all := t.all()
	below := 0 // lines after target, separators included
	for i := len(all) - 1; i >= 0; i-- {
		h := t.itemHeight(all[i])
		if h == 0 {
			continue
		}
		if all[i] == target {
			s := below
			if h > t.height {
				s = below + h - t.height
			}
			t.scroll, t.anchor = max(s, 0), nil
			t.dirty = true
			return
		}
		below += h + 1
	}
}

// itemHeight is an item's rows at the last layout's width.
func (t *transcript) itemHeight(it item) int {
	if t.st == nil {
		return 0
	}
	s := it.view(t.width, t.st, t.spinner)
	if s == "" {
		return 0
	}
	return strings.Count(s, "\n") + 1
}

// scrollBy scrolls up (n > 0) or down by n lines.
func (t *transcript) scrollBy(n int) {
	t.scroll = max(t.scroll+n, 0) // the upper bound is applied by layout
	t.anchor = nil                // layout pins the new top line
	t.dirty = true
}

// layout places the bottom of the transcript, scrolled up by t.scroll
// lines, on a screen of width × height, unless nothing changed since the
// last layout. Only the items that reach the screen are rendered (each
// caches its own output), so a long session costs no more than a short
// one. While scrolled up, the line at the top stays where it is as output
// grows below it (t.anchor).
func (t *transcript) layout(width, height int, st *styles, spinner string) {
	now := t.clock().Truncate(time.Second)
	if !t.dirty && width == t.width && height == t.height && st == t.st && spinner == t.spinner && now.Equal(t.now) {
		return
	}
	t.dirty, t.now = false, now
	t.width, t.height, t.st, t.spinner = width, height, st, spinner
	all := t.all()
	type chunk struct {
		it    item
		lines []string
		dist  int // lines from the bottom of the transcript to this item's top
	}
	var chunks []chunk // bottom-up
	total := 0
	anchorSeen := t.anchor == nil
	for i := len(all) - 1; i >= 0 && (total < height+t.scroll || !anchorSeen); i-- {
		if r, ok := all[i].(timed); ok {
			r.at(now)
		}
		s := all[i].view(width, st, spinner)
		if s == "" {
			continue
		}
		ls := strings.Split(s, "\n")
		if all[i] == t.selected {
			ls = highlight(ls, st)
		}
		if total > 0 {
			ls = append(ls, "") // a blank line between items
		}
		total += len(ls)
		chunks = append(chunks, chunk{it: all[i], lines: ls, dist: total})
		if all[i] == t.anchor {
			anchorSeen = true
			// Keep the anchored line at the top of the screen.
			t.scroll = max(total-t.anchorOff-height, 0)
		}
	}
	if t.scroll > max(total-height, 0) {
		t.scroll = max(total-height, 0)
	}
	lines := make([]string, 0, total)
	for i := len(chunks) - 1; i >= 0; i-- {
		lines = append(lines, chunks[i].lines...)
	}
	end := len(lines) - t.scroll
	start := max(end-height, 0)

	// Remember where everything went: for clicks, and for the anchor.
	t.placed = t.placed[:0]
	t.anchor = nil
	for _, c := range chunks {
		top := total - c.dist - start // screen row of the item's first line
		bottom := top + len(c.lines)
		if bottom <= 0 || top >= end-start {
			continue
		}
		t.placed = append(t.placed, placed{it: c.it, top: top, bottom: bottom})
		if t.scroll > 0 && top <= 0 {
			t.anchor, t.anchorOff = c.it, -top
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
	if t.scroll > 0 {
		out[len(out)-1] = st.scrollIndicator.Render(ansi.Truncate("↓ "+strconv.Itoa(t.scroll)+" more lines below ("+name(keys.Main.PageDown)+")", width, ""))
	}
	t.text = strings.Join(out, "\n")
}

// view is the transcript as the last layout left it: exactly its height in
// rows.
func (t *transcript) view() string { return t.text }

// highlight marks the selected block on its header: the first line that is
// not a rule (a bang block opens with one; a `!!` block's carries a label).
func highlight(ls []string, st *styles) []string {
	ls = append([]string(nil), ls...)
	for i, l := range ls {
		plain := ansi.Strip(l)
		if strings.Trim(plain, "─ ") != "" && !strings.HasPrefix(plain, "─") {
			ls[i] = st.selected.Render(plain)
			break
		}
	}
	return ls
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

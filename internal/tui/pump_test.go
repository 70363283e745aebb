package tui

import (
	"agentsh/internal/agent"
	"strconv"
	"strings"
	"testing"

	tea "charm.land/bubbletea/v2"
)

func TestPumpChunks(t *testing.T) {
	p := newPump(func(tea.Msg) {})
	p.chunk(1, []byte("a\n"))
	p.chunk(1, []byte("b\n"))
	p.event(agent.Event{Type: agent.EventAgentStart})
	p.chunk(1, []byte("c\n"))
	p.chunk(2, []byte("d\n"))
	q := p.drain()
	var got []string
	for _, x := range q {
		switch v := x.(type) {
		case bangChunk:
			got = append(got, strconv.Itoa(v.gen)+":"+v.data)
		case agent.Event:
			got = append(got, "event")
		}
	}
	if want := []string{"1:a\nb\n", "event", "1:c\n", "2:d\n"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("drained %q, want %q", got, want)
	}
	first := q[0].(bangChunk).data
	// A flood keeps only a tail that starts at a line, and reusing the
	// buffer never changes what was drained before.
	for i := range 100000 {
		p.chunk(1, []byte("line "+strconv.Itoa(i)+"\n"))
	}
	q = p.drain()
	if len(q) != 1 {
		t.Fatalf("%d items after the flood", len(q))
	}
	data := q[0].(bangChunk).data
	if len(data) > maxPendingChunk || !strings.HasPrefix(data, "line ") || !strings.HasSuffix(data, "line 99999\n") {
		t.Fatalf("flood tail: %d bytes, starts %q", len(data), data[:20])
	}
	if first != "a\nb\n" {
		t.Fatalf("an earlier drain changed: %q", first)
	}
}

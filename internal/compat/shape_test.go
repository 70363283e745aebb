package compat

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

func mustGolden(t *testing.T, name string) []Line {
	t.Helper()
	tr, err := ReadTranscript(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// edit returns a copy of tr with f applied to the decoded out lines.
func edit(t *testing.T, tr []Line, f func(i int, m map[string]any) map[string]any) []Line {
	t.Helper()
	var out []Line
	for i, l := range tr {
		var m map[string]any
		if l.Dir == "out" && json.Unmarshal(l.Data, &m) == nil {
			m = f(i, m)
			if m == nil {
				continue
			}
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			l.Data = b
		}
		out = append(out, l)
	}
	return out
}

func compare(t *testing.T, want, got []Line) string {
	t.Helper()
	d, err := Compare(want, got, OmpOnly, nil)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(d, "\n")
}

// omp's own transcripts contain themselves; an agent that adds fields and
// differs only in masked values (texts, ids, numbers) contains them too.
func TestCompareAcceptsSameShapes(t *testing.T) {
	for _, name := range []string{"omp-rpc.jsonl", "omp-json.jsonl"} {
		tr := mustGolden(t, name)
		if d := compare(t, tr, tr); d != "" {
			t.Errorf("%s against itself:\n%s", name, d)
		}
		other := edit(t, tr, func(_ int, m map[string]any) map[string]any {
			m["agentshExtra"] = 1
			if msg, ok := m["message"].(map[string]any); ok {
				msg["timestamp"] = 7.0
				msg["model"] = "other-model"
				delete(msg, "contextSnapshot") // allowed
			}
			return m
		})
		if d := compare(t, tr, other); d != "" {
			t.Errorf("%s against an agent with other values and more fields:\n%s", name, d)
		}
	}
}

// A missing field, another JSON type, another stopReason, a missing event
// and a failed command are each reported with where they are.
func TestCompareReportsDifferences(t *testing.T) {
	tr := mustGolden(t, "omp-rpc.jsonl")
	got := edit(t, tr, func(_ int, m map[string]any) map[string]any {
		switch m["type"] {
		case "message_end":
			msg := m["message"].(map[string]any)
			if msg["role"] == "assistant" {
				delete(msg, "usage")
				msg["stopReason"] = "end_turn"
			}
			if msg["role"] == "toolResult" {
				msg["content"] = "hello"
			}
		case "message_start":
			if m["message"].(map[string]any)["role"] == "user" {
				return nil
			}
		case "response":
			if m["command"] == "get_state" {
				return map[string]any{"id": "c7", "type": "response", "command": "get_state", "success": false, "error": "Unknown command: get_state"}
			}
		}
		return m
	})
	d := compare(t, tr, got)
	for _, want := range []string{
		"#1 prompt: message_end(assistant): missing .message.usage",
		"#1 prompt: message_end(assistant): value .message.stopReason: omp toolUse, agentsh end_turn",
		"#1 prompt: message_end(toolResult): type .message.content: omp array, agentsh string",
		"#1 prompt: agentsh writes no message_start(user)",
		"#1 prompt: event order:",
		"#7 get_state: response(get_state): omp succeeds, agentsh answers an error",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("diff lacks %q:\n%s", want, d)
		}
	}
	if strings.Contains(d, "contextSnapshot") || strings.Contains(d, "partialArgs") {
		t.Errorf("diff names an allowed field:\n%s", d)
	}
}

// Array elements are compared per variant: a toolCall block is not
// satisfied by a text block.
func TestShapeVariants(t *testing.T) {
	var omp, ag any
	json.Unmarshal([]byte(`{"content":[{"type":"text","text":"a"},{"type":"toolCall","id":"x","name":"bash","arguments":{}}]}`), &omp)
	json.Unmarshal([]byte(`{"content":[{"type":"text","text":"b","extra":true}]}`), &ag)
	d := strings.Join(Contains(ShapeOf(omp), ShapeOf(ag), "", nil), "\n")
	if d != "missing .content[toolCall]" {
		t.Errorf("got %q", d)
	}
	json.Unmarshal([]byte(`{"content":[]}`), &ag)
	if d := strings.Join(Contains(ShapeOf(omp), ShapeOf(ag), "", nil), "\n"); !strings.HasPrefix(d, "empty .content") {
		t.Errorf("got %q", d)
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"agentsh/internal/fakemodel"
)

// TestRPCSwitchSessionEndToEnd: the real binary names a session, starts a
// new one, switches back to the first by its file and answers the next
// prompt with the first conversation in the request; an unknown command is
// answered with its id.
func TestRPCSwitchSessionEndToEnd(t *testing.T) {
	s := newSandbox(t)
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer(fmt.Sprintf("answer %d", n)) })
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd, in, next := startRPCLines(t, s.command(ctx, s.work, srv.OpenAIEnv(), "--mode", "rpc", "--model", "openai/test"))
	call := func(id, line string) map[string]any {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		for {
			if l := next(); l["type"] == "response" && l["id"] == id {
				return l
			}
		}
	}
	waitEnd := func() {
		t.Helper()
		for next()["type"] != "agent_end" {
		}
	}
	if l := next(); l["type"] != "ready" || l["protocolVersion"] != float64(1) {
		t.Fatalf("ready line %v", l)
	}
	if l := call("u", `{"id":"u","type":"frobnicate"}`); l["success"] != false || l["error"] != "Unknown command: frobnicate" {
		t.Fatalf("unknown command: %v", l)
	}
	call("p1", `{"id":"p1","type":"prompt","message":"remember kiwi"}`)
	waitEnd()
	call("n", `{"id":"n","type":"set_session_name","name":"fruit"}`)
	first := call("s1", `{"id":"s1","type":"get_state"}`)["data"].(map[string]any)
	call("new", `{"id":"new","type":"new_session"}`)
	call("p2", `{"id":"p2","type":"prompt","message":"unrelated"}`)
	waitEnd()
	if l := call("sw", fmt.Sprintf(`{"id":"sw","type":"switch_session","sessionPath":%q}`, first["sessionFile"])); l["success"] != true {
		t.Fatalf("switch_session: %v", l)
	}
	st := call("s2", `{"id":"s2","type":"get_state"}`)["data"].(map[string]any)
	if st["sessionId"] != first["sessionId"] || st["sessionName"] != "fruit" || st["messageCount"] != float64(2) {
		t.Fatalf("state after the switch: %v", st)
	}
	call("p3", `{"id":"p3","type":"prompt","message":"which fruit?"}`)
	waitEnd()
	var got []string
	for _, m := range fakemodel.OpenAIMessages(srv.Request(t, 2).Body) {
		if m.Role != "system" {
			got = append(got, m.Content)
		}
	}
	if strings.Join(got, "|") != "remember kiwi|answer 0|which fruit?" {
		t.Errorf("request after the switch: %q", got)
	}
	in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("exit: %v", err)
	}
}

package agent

import (
	"context"
	"strings"
	"testing"

	"agentsh/internal/fakemodel"
	"agentsh/internal/session"
)

// A steer queued before a prompt (left from an aborted run) joins at the
// prompt's first step, after the prompt; a follow-up when the model would
// stop. Taking the queue back empties it.
func TestQueuedInputJoinsTheNextPrompt(t *testing.T) {
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) { w.Answer("ok") })
	a, _, reg := newLoopAgent(t)
	a.Steer("steer me")
	a.FollowUp("after that")
	if a.QueuedInputCount() != 2 {
		t.Fatalf("count %d", a.QueuedInputCount())
	}
	if err := promptWithGuard(t, context.Background(), a, "the prompt", openAIProvider(srv), reg, nil); err != nil {
		t.Fatal(err)
	}
	var got []string
	for n := range srv.Requests() {
		var users []string
		for _, m := range fakemodel.OpenAIMessages(srv.Request(t, n).Body) {
			if m.Role == "user" {
				users = append(users, m.Content)
			}
		}
		got = append(got, strings.Join(users, "+"))
	}
	if want := "the prompt+steer me|the prompt+steer me+after that"; strings.Join(got, "|") != want {
		t.Errorf("requests' user messages %q, want %q", got, want)
	}
	msgs := a.Messages()
	if u, ok := msgs[1].(*session.UserMessage); !ok || !u.Steering || !u.Queued || u.Text != "steer me" {
		t.Errorf("message 1: %#v", msgs[1])
	}
	a.Steer("x")
	a.FollowUp("y")
	if s, f := a.TakeQueuedInput(); strings.Join(s, ",") != "x" || strings.Join(f, ",") != "y" || a.QueuedInputCount() != 0 {
		t.Errorf("take back: %q %q", s, f)
	}
	if err := a.SetFollowUpMode("sometimes"); err == nil || a.FollowUpMode() != QueueOneAtATime {
		t.Errorf("bad mode accepted: %v", err)
	}
}

// A session's name is a title_change entry: the last one wins on load.
func TestSessionNameSaved(t *testing.T) {
	a, s := newAgent(t)
	if err := a.SetName(" "); err != ErrEmptyName {
		t.Errorf("blank name: %v", err)
	}
	if err := a.SetName("one"); err != nil {
		t.Fatal(err)
	}
	if err := a.SetName(" two "); err != nil {
		t.Fatal(err)
	}
	if a.Name() != "two" {
		t.Errorf("name %q", a.Name())
	}
	st, errs, err := session.Open(s.Path())
	if err != nil || len(errs) != 0 {
		t.Fatal(err, errs)
	}
	defer st.Close()
	if st.Name() != "two" || len(st.LoadedMessages()) != 0 {
		t.Errorf("reopened: name %q, %d messages", st.Name(), len(st.LoadedMessages()))
	}
}

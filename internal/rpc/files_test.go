package rpc

import (
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/session"
)

// fileRig is a server whose sessions have files, with a saved session to
// switch to; open, when set, runs before a switch_session's load.
type fileRig struct {
	*client
	cwd   string
	saved string // a saved session file with one user message, "saved hello"
	mu    sync.Mutex
	open  func(path string)
}

func startFileRig(t *testing.T) *fileRig {
	t.Helper()
	exec := bash.NewExecutor()
	exec.KillGrace = 200 * time.Millisecond
	t.Cleanup(exec.Close)
	r := &fileRig{cwd: t.TempDir()}
	sessions := t.TempDir()
	st, err := session.CreateIn(sessions, r.cwd)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Append(&session.UserMessage{Text: "saved hello"}); err != nil {
		t.Fatal(err)
	}
	r.saved = st.Path()
	st.Close()
	var stores []*session.Store
	var smu sync.Mutex
	t.Cleanup(func() {
		smu.Lock()
		defer smu.Unlock()
		for _, s := range stores {
			s.Close()
		}
	})
	adopt := func(store *session.Store) (*agent.AgentSession, error) {
		smu.Lock()
		stores = append(stores, store)
		smu.Unlock()
		return agent.New(r.cwd, store, exec, bash.ShellConfig{})
	}
	r.client = serve(t, Config{
		NewSession: func() (*agent.AgentSession, error) {
			store, err := session.CreateIn(sessions, r.cwd)
			if err != nil {
				return nil, err
			}
			return adopt(store)
		},
		OpenSession: func(path string) (*agent.AgentSession, error) {
			r.mu.Lock()
			hook := r.open
			r.mu.Unlock()
			if hook != nil {
				hook(path)
			}
			store, _, err := session.Open(path)
			if err != nil {
				return nil, err
			}
			return adopt(store)
		},
	}, "")
	return r
}

// switch_session to a FIFO, to /dev/stdin (the client's pipe, as agentsh's
// stdin is in RPC mode) or to /dev/zero, and export_html to the same, are
// refused at once over the real server: the loop goes on answering, the
// session stays, the client's pipe gets nothing, and no special file is
// read or written.
func TestFileCommandsRefuseSpecialFiles(t *testing.T) {
	r := startFileRig(t)
	// The test process's stdin becomes a pipe nobody writes to, as the RPC
	// client's is: reading it would block, writing to it would fill it.
	var p [2]int
	if err := unix.Pipe2(p[:], unix.O_CLOEXEC); err != nil {
		t.Fatal(err)
	}
	saved, err := unix.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(p[0], 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = unix.Dup2(saved, 0)
		unix.Close(saved)
		unix.Close(p[0])
		unix.Close(p[1])
	})
	fifo := filepath.Join(t.TempDir(), "s.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	id := r.ok("s0", `{"id":"s0","type":"get_state"}`).(map[string]any)["sessionId"]
	for _, target := range []string{fifo, "/dev/stdin", "/dev/zero"} {
		r.send(`{"id":"sw","type":"switch_session","sessionPath":"` + target + `"}`)
		if l := r.response("sw"); l["success"] != false || !strings.Contains(l["error"].(string), "not a regular file") {
			t.Errorf("switch_session %s: %v", target, l)
		}
		r.send(`{"id":"ex","type":"export_html","outputPath":"` + target + `"}`)
		if l := r.response("ex"); l["success"] != false || !strings.Contains(l["error"].(string), "not a regular file") {
			t.Errorf("export_html %s: %v", target, l)
		}
		if st := r.ok("s", `{"id":"s","type":"get_state"}`).(map[string]any); st["sessionId"] != id {
			t.Errorf("after %s: session %v, was %v", target, st["sessionId"], id)
		}
	}
	// Nothing reached the client's pipe.
	var st unix.Stat_t
	if n, err := unix.IoctlGetInt(p[0], unix.TIOCINQ); err != nil || n != 0 {
		t.Errorf("the stdin pipe holds %d bytes (%v)", n, err)
	}
	if err := unix.Stat(fifo, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFIFO {
		t.Errorf("the FIFO was replaced: %v", err)
	}
	// A regular file still switches.
	r.ok("ok", `{"id":"ok","type":"switch_session","sessionPath":"`+r.saved+`"}`)
	if st := r.ok("s2", `{"id":"s2","type":"get_state"}`).(map[string]any); st["sessionId"] == id || st["messageCount"] != float64(1) {
		t.Errorf("after the switch: %v", st)
	}
}

// While switch_session reads its file, the loop answers get_state (the
// session before the switch), abort and abort_bash at once; the commands
// sent after the switch wait for it and then run in order, on the new
// session, also when the input ends meanwhile, and a get_state sent after
// a waiting command keeps its place after it. The load is held by the test
// until those answers came, so the order does not depend on how long a
// load takes.
func TestSwitchSessionLoadsBesideTheLoop(t *testing.T) {
	r := startFileRig(t)
	held, release := make(chan struct{}, 1), make(chan struct{})
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free)
	r.mu.Lock()
	r.open = func(string) {
		held <- struct{}{}
		<-release
	}
	r.mu.Unlock()
	old := r.ok("s0", `{"id":"s0","type":"get_state"}`).(map[string]any)["sessionId"]

	r.send(`{"id":"sw","type":"switch_session","sessionPath":"` + r.saved + `"}`)
	select {
	case <-held:
	case <-time.After(hangGuardRPC):
		t.Fatal("the switch never started its load")
	}
	// A loop that loads in line reads nothing more: the write itself
	// would block, so it is guarded too.
	r.sendGuarded(`{"id":"s1","type":"get_state"}`)
	if st := r.response("s1"); st["success"] != true || st["data"].(map[string]any)["sessionId"] != old {
		t.Errorf("get_state during the switch: %v, want the session before it (%v)", st, old)
	}
	r.sendGuarded(`{"id":"a","type":"abort"}`)
	r.sendGuarded(`{"id":"ab","type":"abort_bash"}`)
	for _, id := range []string{"a", "ab"} {
		if l := r.response(id); l["success"] != true {
			t.Errorf("%s during the switch: %v", id, l)
		}
	}
	r.sendGuarded(`{"id":"m","type":"get_messages"}`)
	r.sendGuarded(`{"id":"s2","type":"get_state"}`)
	for _, l := range r.skipped {
		if l["type"] == "response" && l["id"] != "s0" {
			t.Fatalf("%v answered while the load was held", l)
		}
	}
	// The input ends before the load does: what was sent still runs.
	r.in.Close()
	free()
	var order []string
	var msgs []any
	var st map[string]any
	for len(order) < 3 {
		l := r.next()
		if l["type"] != "response" {
			continue
		}
		order = append(order, l["id"].(string))
		if l["success"] != true {
			t.Errorf("%v", l)
		}
		switch l["id"] {
		case "m":
			msgs, _ = l["data"].(map[string]any)["messages"].([]any)
		case "s2":
			st, _ = l["data"].(map[string]any)
		}
	}
	if strings.Join(order, ",") != "sw,m,s2" {
		t.Errorf("responses in order %v, want sw,m,s2", order)
	}
	if len(msgs) != 1 || !strings.Contains(mustJSON(t, msgs[0]), "saved hello") {
		t.Errorf("get_messages after the switch: %v", msgs)
	}
	if st["sessionId"] == old || st["messageCount"] != float64(1) {
		t.Errorf("get_state after the switch: %v", st)
	}
	select {
	case err := <-r.done:
		if err != nil {
			t.Errorf("Serve: %v", err)
		}
		r.done <- err // for serve's cleanup
	case <-time.After(hangGuardRPC):
		t.Fatal("Serve did not return after the input ended")
	}
}

// sendGuarded is send with a hang guard: a server that stopped reading
// its input blocks the write.
func (c *client) sendGuarded(line string) {
	c.t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := io.WriteString(c.in, line+"\n")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			c.t.Fatal(err)
		}
	case <-time.After(hangGuardRPC):
		c.t.Fatalf("the server read nothing for %v: %s not sent", hangGuardRPC, line)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

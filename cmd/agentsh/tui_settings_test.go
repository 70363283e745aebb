package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	sbx "agentsh/internal/sandbox"
)

// noSpace is s without its white space: a long path the transcript wraps
// reads whole again.
func noSpace(s string) string { return strings.Join(strings.Fields(s), "") }

// TestTUIStartsOnBrokenSettings: a project settings file broken before
// agentsh starts does not keep the TUI out. It starts on the
// defaults and says which file does not load and why; `!` commands run;
// the `!` command that fixes the file (outside the sandbox, as the user)
// takes the status line's warning away.
func TestTUIStartsOnBrokenSettings(t *testing.T) {
	s := newSandbox(t)
	project := filepath.Join(s.work, ".agentsh", "settings.json")
	writeFile(t, project, "{\n  \"shell\": \n")
	tt := startTUI(t, s)
	want := noSpace("settings: " + project + ":3:1: unexpected end of JSON input\n" +
		"`!` commands run with the default settings until the file is fixed; the model's commands are refused.")
	tt.waitScreen("the warning naming the file", func(scr string) bool { return strings.Contains(noSpace(scr), want) })
	status := "⚠ .agentsh/settings.json does not load"
	tt.waitText(status)
	// The sandbox the file sets is unknown: the model's is the strictest.
	if scr := tt.waitText(readOnlyNotice[:40]); !strings.Contains(noSpace(scr), noSpace(readOnlyNotice)) {
		t.Errorf("no notice %q:\n%s", readOnlyNotice, scr)
	}

	tt.bang("echo hi")
	scr := tt.bangDone("echo hi")
	if !strings.Contains(scr, "$ echo hi\nhi\n") {
		t.Errorf("no output of echo hi:\n%s", scr)
	}
	if !strings.Contains(scr, status) {
		t.Errorf("the status line lost the warning while the file is broken:\n%s", scr)
	}

	tt.bang(`printf '{}' > .agentsh/settings.json`)
	scr = tt.waitText("The settings files load again: `!` commands and the model's commands use them.")
	if strings.Contains(scr, status) || strings.Count(noSpace(scr), want) > 2 {
		t.Errorf("still a warning after the fix:\n%s", scr)
	}
	if data, err := os.ReadFile(project); err != nil || string(data) != "{}" {
		t.Errorf("the fixed file: %q %v", data, err)
	}
}

// A settings file broken at start: RPC mode starts, says so on
// stderr, its bash commands run on the defaults with settingsError, and the
// model's sandbox is read-only; print mode and exec, with no one to fix the
// file, do not start and name it.
func TestModesOnBrokenSettingsAtStart(t *testing.T) {
	s := newSandbox(t)
	project := filepath.Join(s.work, ".agentsh", "settings.json")
	writeFile(t, project, "{\n  \"shell\": \n")
	msg := "settings: " + project + ":3:1: unexpected end of JSON input"

	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var errb bytes.Buffer
	cmd, in, outPipe := s.startRPC(ctx, nil, func(c *exec.Cmd) { c.Stderr = &errb })
	lines := bufio.NewScanner(outPipe)
	// ask sends a command and returns its response's data.
	ask := func(id, line string) json.RawMessage {
		t.Helper()
		if _, err := io.WriteString(in, line+"\n"); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() {
			var l rpcLine
			if json.Unmarshal(lines.Bytes(), &l) == nil && l.ID == id {
				return l.Data
			}
		}
		t.Fatalf("no response to %s: %v", id, lines.Err())
		return nil
	}
	var b struct{ Output, SettingsError string }
	_ = json.Unmarshal(ask("b", `{"id":"b","type":"bash","command":"echo hi"}`), &b)
	var st struct{ Sandbox struct{ Mode string } }
	_ = json.Unmarshal(ask("s", `{"id":"s","type":"get_state"}`), &st)
	in.Close()
	if err := cmd.Wait(); err != nil || !strings.HasPrefix(errb.String(), "agentsh: "+msg+"\nagentsh: "+brokenAtStart+"\n") {
		t.Errorf("rpc: %v, stderr %q", err, errb.String())
	}
	if b.Output != "hi\n" || b.SettingsError != msg || sbx.Unavailable() == "" && st.Sandbox.Mode != "read-only" {
		t.Errorf("rpc: bash %q settingsError %q sandbox %q", b.Output, b.SettingsError, st.Sandbox.Mode)
	}

	want(t, s.run("-p", "hi"), "", "agentsh: "+msg+"\n", 1)
	want(t, s.run("exec", "--", "echo", "hi"), "", "agentsh: "+msg+"\n", 1)
}

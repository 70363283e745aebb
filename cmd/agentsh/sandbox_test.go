package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"agentsh/internal/config"
	sbx "agentsh/internal/sandbox"
)

// TestParseSandboxFlags: --sandbox takes a mode (separate or with =),
// --yolo none; both together and an unknown mode are usage errors.
func TestParseSandboxFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want config.SandboxFlags
		err  string
	}{
		{[]string{"-p", "x"}, config.SandboxFlags{}, ""},
		{[]string{"--sandbox", "read-only", "-p", "x"}, config.SandboxFlags{Mode: sbx.ReadOnly}, ""},
		{[]string{"-p", "--sandbox=off", "x"}, config.SandboxFlags{Mode: sbx.Off}, ""},
		{[]string{"--yolo", "x"}, config.SandboxFlags{Yolo: true}, ""},
		{[]string{"--yolo", "--sandbox", "off"}, config.SandboxFlags{}, "--yolo and --sandbox cannot be combined"},
		{[]string{"--sandbox", "strict"}, config.SandboxFlags{}, `--sandbox: unknown sandbox mode "strict" (want workspace-write, read-only or off)`},
		{[]string{"--sandbox"}, config.SandboxFlags{}, "flag --sandbox needs a value"},
		{[]string{"--yolo=1"}, config.SandboxFlags{}, "flag --yolo takes no value"},
	} {
		o, err := parseModeArgs(c.args)
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%q: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || o.sandbox != c.want {
			t.Errorf("%q: %+v, %v; want %+v", c.args, o.sandbox, err, c.want)
		}
	}
}

// TestExecSandbox: agentsh exec takes --sandbox and --yolo; off runs the
// command as before, a mode runs it on the tool path (no warning where
// the system can confine), and a bad flag or setting is a clear error.
func TestExecSandbox(t *testing.T) {
	s := newSandbox(t)
	want(t, s.run("exec", "--sandbox", "off", "--", "true"), "(no output)\n", "", 0)
	want(t, s.run("exec", "--yolo", "--", "echo", "hi"), "hi\n", "", 0)
	want(t, s.run("exec", "--sandbox", "strict", "--", "true"), "",
		"agentsh exec: --sandbox: unknown sandbox mode \"strict\" (want workspace-write, read-only or off)\n", 2)
	want(t, s.run("exec", "--yolo", "--sandbox", "off", "--", "true"), "", "agentsh exec: --yolo and --sandbox cannot be combined\n", 2)
	warning := ""
	if msg := sbx.Warning(sbx.ReadOnly, false); msg != "" {
		warning = "agentsh: " + msg + "\n"
	}
	want(t, s.run("exec", "--sandbox", "read-only", "--", "pwd"), s.work+"\n", warning, 0)

	global := filepath.Join(s.config, "agentsh", "settings.json")
	writeFile(t, global, `{"sandbox": {"mode": "strict"}}`)
	want(t, s.run("exec", "--", "true"), "",
		"agentsh: settings: "+global+`:1:22: sandbox.mode: must be "workspace-write", "read-only" or "off", got string "strict"`+"\n", 1)
	// The flag does not rescue a broken file: agentsh never runs on one.
	if r := s.run("exec", "--sandbox", "off", "--", "true"); r.code != 1 {
		t.Errorf("a broken settings file under --sandbox off: %v", r)
	}
}

// rpcSandbox runs agentsh --mode rpc with args, asks get_state and returns
// its sandbox.
func rpcSandbox(t *testing.T, s *sandbox, args ...string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	var out, errb bytes.Buffer
	cmd := s.command(ctx, s.work, nil, append([]string{"--mode", "rpc"}, args...)...)
	cmd.Stdin = strings.NewReader(`{"id":"s","type":"get_state"}` + "\n")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if code := exitCode(t, cmd.Run()); code != 0 {
		t.Fatalf("agentsh --mode rpc %q: exit %d, stderr %q", args, code, errb.String())
	}
	sc := bufio.NewScanner(&out)
	for sc.Scan() {
		var l rpcLine
		if json.Unmarshal(sc.Bytes(), &l) == nil && l.ID == "s" {
			var d map[string]any
			if err := json.Unmarshal(l.Data, &d); err != nil {
				t.Fatal(err)
			}
			return d["sandbox"].(map[string]any)
		}
	}
	t.Fatalf("no get_state answer in %q", out.String())
	return nil
}

// TestModeSandboxFlags: the real binary in RPC mode starts the model's
// sandbox from the settings, and --sandbox and --yolo beat them; print
// mode refuses a bad mode as a usage error.
func TestModeSandboxFlags(t *testing.T) {
	if sbx.Unavailable() != "" {
		t.Skip(sbx.Unavailable())
	}
	s := newSandbox(t)
	check := func(args []string, mode string, yolo, network bool, status string) {
		t.Helper()
		got := rpcSandbox(t, s, args...)
		if got["mode"] != mode || got["yolo"] != yolo || got["network"] != network || got["bash"] != "off" || got["status"] != status {
			t.Errorf("%q: sandbox %v, want mode %s yolo %v network %v status %q", args, got, mode, yolo, network, status)
		}
	}
	check(nil, "workspace-write", false, false, sbx.Describe(sbx.WorkspaceWrite, false, false))
	// The project's yolo and network loosen: trusted for the run.
	writeFile(t, filepath.Join(s.work, ".agentsh", "settings.json"), `{"sandbox": {"mode": "read-only", "network": "on"}, "yolo": true}`)
	check([]string{"--trust-project"}, "off", true, true, "YOLO")
	check([]string{"--trust-project", "--sandbox", "workspace-write"}, "workspace-write", false, true, sbx.Describe(sbx.WorkspaceWrite, true, false))
	check([]string{"--trust-project", "--sandbox=off"}, "off", false, true, "sandbox: off")
	check([]string{"--trust-project", "--yolo"}, "off", true, true, "YOLO")

	r := s.run("-p", "--sandbox", "nope", "hello")
	if r.code != 2 || !strings.HasPrefix(r.stderr, "agentsh: --sandbox: unknown sandbox mode \"nope\" (want workspace-write, read-only or off)\n") {
		t.Errorf("print mode with a bad --sandbox: %v", r)
	}
}

// TestTUISandboxStatus: the real TUI's status line shows the sandbox mode,
// and YOLO under --yolo.
func TestTUISandboxStatus(t *testing.T) {
	if sbx.Unavailable() != "" {
		t.Skip(sbx.Unavailable())
	}
	s := newSandbox(t)
	tt := startTUI(t, s)
	last := func(screen string) string {
		lines := strings.Split(strings.TrimRight(screen, "\n"), "\n")
		return lines[len(lines)-1]
	}
	// "sandbox weaker: …" where the kernel cannot enforce all of it.
	status := sbx.Describe(sbx.WorkspaceWrite, false, false)
	if l := last(tt.waitText(status)); !strings.Contains(l, "· "+status+" ·") {
		t.Errorf("status line %q", l)
	}
	tt.keys("C-d")
	tt.waitExit()

	yolo := startTUIArgs(t, s, []string{"--yolo"})
	if l := last(yolo.waitText("YOLO")); !strings.Contains(l, "· YOLO ·") || strings.Contains(l, "sandbox") {
		t.Errorf("status line under --yolo %q", l)
	}
	yolo.keys("C-d")
	yolo.waitExit()
}

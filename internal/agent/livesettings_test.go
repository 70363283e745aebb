package agent

import (
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"context"
	"errors"
	"strings"
	"testing"
)

// A file broken at start: the user's commands run on the
// defaults with the file's error, the model's are refused with it, and the
// fixed file applies from the next command.
func TestLiveSettingsBrokenAtStart(t *testing.T) {
	a, _ := newAgent(t)
	dir := t.TempDir()
	g := writeSettings(t, dir, "{\n  \"shell\": {\"env\": {\"A\": \n")
	l, err := config.WatchSettingsFrom(g, "")
	want := "settings: " + g + ":3:1: unexpected end of JSON input"
	if err == nil || err.Error() != want || l == nil {
		t.Fatalf("WatchSettingsFrom = %v, %v; want the error %q and the defaults", l, err, want)
	}
	if s, err := l.Current(); l.Loaded() || err == nil || s.VirtualTerminal != "off" || len(s.Sources) != 0 {
		t.Fatalf("Current = %+v, %v; want the defaults", s, err)
	}
	a.FollowSettings(l)

	run, err := a.ExecuteBashRun(context.Background(), `echo "hi${A}"`, nil, BashOptions{})
	if err != nil || run.Output != "hi\n" || run.SettingsError != want {
		t.Fatalf("! on the defaults: %q %q %v", run.Output, run.SettingsError, err)
	}
	_, err = (&bash.Tool{}).Execute(context.Background(), bash.ToolParams{Command: "echo hi"}, a.ToolContext(bash.ToolSettings{}), nil)
	var te *bash.ToolError
	if !errors.As(err, &te) || te.Message != want {
		t.Fatalf("the model's command: %v, want refused with %q", err, want)
	}

	writeSettings(t, dir, `{"shell": {"env": {"A": "1"}}}`)
	run, err = a.ExecuteBashRun(context.Background(), `echo "hi${A}"`, nil, BashOptions{})
	if err != nil || run.Output != "hi1\n" || run.SettingsError != "" || !l.Loaded() {
		t.Fatalf("! after the fix: %q %q %v", run.Output, run.SettingsError, err)
	}
	res, err := (&bash.Tool{}).Execute(context.Background(), bash.ToolParams{Command: `echo "hi${A}"`}, a.ToolContext(bash.ToolSettings{}), nil)
	if err != nil || !strings.HasPrefix(res.Text, "hi1") {
		t.Fatalf("the model's command after the fix: %+v %v", res, err)
	}
}

package agent

import (
	"context"
	"sort"
	"strings"
	"testing"

	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/fakemodel"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// scrubProbe is agentsh's own environment in the scrub tests.
var scrubProbe = map[string]string{
	"OPENAI_API_KEY":  "sk-scrub-test",
	"FOO_TOKEN":       "tok-scrub-test",
	"MY_SECRET_X":     "sec-scrub-test",
	"DB_PASSWORD":     "pw-scrub-test",
	"PLAIN_SCRUB_VAR": "plain",
}

// probeNames returns which of scrubProbe's entries appear in env output.
func probeNames(out string) string {
	var seen []string
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && scrubProbe[k] == v && v != "" {
			seen = append(seen, k)
		}
	}
	sort.Strings(seen)
	return strings.Join(seen, " ")
}

// modelEnv runs one prompt whose model calls `env` through the bash tool
// and returns what the tool result (as sent back to the model) shows, and
// what a bang `env` on the same session shows. settingsJSON is the
// global settings file; the shell config is built from it the way the
// agentsh command does.
func modelEnv(t *testing.T, settingsJSON string) (model, bang string) {
	t.Helper()
	settings := loadOK(t, writeSettings(t, t.TempDir(), settingsJSON), "")
	shell := bash.ShellConfig{Env: settings.ShellEnv, ScrubEnv: settings.ShellScrubEnv}
	isolateData(t)
	cwd := t.TempDir()
	store, err := session.Create(cwd)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	ex := bash.NewExecutor()
	t.Cleanup(ex.Close)
	// One config for both, as the command passes it: New must drop the
	// scrub list for the user's own commands.
	a, err := New(cwd, store, ex, shell)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := tools.NewRegistry(tools.NewBash(&bash.Tool{Executor: ex}, func() bash.ToolContext {
		return a.ToolContext(bash.ToolSettings{Shell: shell})
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv := fakemodel.New(t, func(n int, w *fakemodel.Writer) {
		if n == 0 {
			w.ToolCall(0, "call_env", "bash", `{"command":"env"}`)
			w.Finish("tool_calls")
			return
		}
		w.Answer("done")
	})
	if err := promptWithGuard(t, context.Background(), a, "show the environment", openAIProvider(srv), reg, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	reqs := srv.Bodies()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	w := wireMessages(t, reqs[1])
	last := w[len(w)-1]
	if !strings.HasPrefix(last, "tool: (call_env) ") || !strings.Contains(last, "PATH=") {
		t.Fatalf("request 1 does not end with the env result: %.300q", last)
	}
	res := mustBash(t, a, "env", BashOptions{})
	return probeNames(last), probeNames(res.Output)
}

func TestModelShellsDoNotSeeSecrets(t *testing.T) {
	for k, v := range scrubProbe {
		t.Setenv(k, v)
	}
	const all = "DB_PASSWORD FOO_TOKEN MY_SECRET_X OPENAI_API_KEY PLAIN_SCRUB_VAR"
	for _, c := range []struct {
		name, settings, model string
	}{
		{"default list", `{}`, "PLAIN_SCRUB_VAR"},
		{"list from settings", `{"shell": {"scrubEnv": ["MY_*", "PLAIN_SCRUB_VAR"]}}`, "DB_PASSWORD FOO_TOKEN OPENAI_API_KEY"},
		{"scrubbing off", `{"shell": {"scrubEnv": []}}`, all},
		{"shell.env is kept", `{"shell": {"env": {"FOO_TOKEN": "tok-scrub-test"}}}`, "FOO_TOKEN PLAIN_SCRUB_VAR"},
	} {
		t.Run(c.name, func(t *testing.T) {
			model, bang := modelEnv(t, c.settings)
			if model != c.model {
				t.Errorf("the model's env showed %q, want %q", model, c.model)
			}
			if bang != all {
				t.Errorf("the user's !env showed %q, want %q", bang, all)
			}
		})
	}
}

func TestSettingsScrubEnv(t *testing.T) {
	dir := t.TempDir()
	def := strings.Join(bash.DefaultScrubEnv(), " ")
	if got := strings.Join(loadOK(t, "", "").ShellScrubEnv, " "); got != def {
		t.Errorf("without settings: %q, want the default %q", got, def)
	}
	g := writeSettings(t, t.TempDir(), `{"shell": {"scrubEnv": ["A_*", "B?"]}}`)
	if got := strings.Join(loadOK(t, g, "").ShellScrubEnv, " "); got != "A_* B?" {
		t.Errorf("configured: %q", got)
	}
	p := writeSettings(t, t.TempDir(), `{"shell.scrubEnv": []}`)
	if s := loadTrusted(t, g, p); s.ShellScrubEnv == nil || len(s.ShellScrubEnv) != 0 {
		t.Errorf("[] in the project file: %#v, want empty (scrubbing off)", s.ShellScrubEnv)
	}
	p = writeSettings(t, t.TempDir(), `{"shell": {"scrubEnv": null}}`)
	if got := strings.Join(loadTrusted(t, g, p).ShellScrubEnv, " "); got != def {
		t.Errorf("null in the project file: %q, want the default", got)
	}

	for _, c := range []struct{ content, want string }{
		{`{"shell": {"scrubEnv": "*_TOKEN"}}`, `:1:24: shell.scrubEnv: expected array of strings, got string`},
		{`{"shell": {"scrubEnv": ["*_TOKEN", 3]}}`, `:1:36: shell.scrubEnv[1]: expected string, got number`},
		{`{"shell": {"scrubEnv": [""]}}`, `:1:25: shell.scrubEnv[0]: empty pattern`},
		{`{"shell": {"scrubEnv": ["[A"]}}`, `:1:25: shell.scrubEnv[0]: bad pattern "[A": syntax error in pattern`},
	} {
		p := writeSettings(t, dir, c.content)
		_, err := config.LoadSettingsFrom(p, "")
		if err == nil || err.Error() != "settings: "+p+c.want {
			t.Errorf("%s:\n got  %v\n want %q", c.content, err, "settings: "+p+c.want)
		}
	}
}

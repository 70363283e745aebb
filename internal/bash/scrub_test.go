package bash

import (
	"sort"
	"strings"
	"testing"
)

// secretEnv is what the scrub tests put into agentsh's own environment: a
// provider key, one name for each default pattern, and two that must pass.
var secretEnv = map[string]string{
	"OPENAI_API_KEY":  "sk-scrub-test",
	"FOO_TOKEN":       "tok-scrub-test",
	"MY_SECRET_X":     "sec-scrub-test",
	"DB_PASSWORD":     "pw-scrub-test",
	"OPENAI_BASE_URL": "http://127.0.0.1:9/v1",
	"PLAIN_SCRUB_VAR": "plain",
}

func setSecretEnv(t *testing.T) {
	for k, v := range secretEnv {
		t.Setenv(k, v)
	}
}

// seenNames runs `env` through the tool and returns which of secretEnv's
// names the command saw, sorted.
func seenNames(t *testing.T, te *toolEnv) []string {
	t.Helper()
	r := te.exec(t, ToolParams{Command: "env"})
	if r.IsError {
		t.Fatalf("env failed: %q", r.Content)
	}
	var seen []string
	for _, line := range strings.Split(r.Content, "\n") {
		k, v, ok := strings.Cut(line, "=")
		if want, known := secretEnv[k]; ok && known {
			if v != want {
				t.Errorf("%s=%q, want %q", k, v, want)
			}
			seen = append(seen, k)
		}
	}
	sort.Strings(seen)
	return seen
}

func TestScrubEnvHidesSecretsFromModelShells(t *testing.T) {
	setSecretEnv(t)
	te := newToolEnv(t)
	te.tc.Settings.Shell.ScrubEnv = DefaultScrubEnv()
	if got, want := strings.Join(seenNames(t, te), " "), "OPENAI_BASE_URL PLAIN_SCRUB_VAR"; got != want {
		t.Errorf("model shell saw %q, want only %q", got, want)
	}

	// The same executor, no scrub list (a bang command's config): a
	// different shell, with everything.
	bang := *te
	bang.tc.Settings.Shell.ScrubEnv = nil
	if got, want := strings.Join(seenNames(t, &bang), " "),
		"DB_PASSWORD FOO_TOKEN MY_SECRET_X OPENAI_API_KEY OPENAI_BASE_URL PLAIN_SCRUB_VAR"; got != want {
		t.Errorf("unscrubbed shell saw %q, want %q", got, want)
	}
	// …and the scrubbed one was not replaced by it in the cache.
	if got, want := strings.Join(seenNames(t, te), " "), "OPENAI_BASE_URL PLAIN_SCRUB_VAR"; got != want {
		t.Errorf("model shell after an unscrubbed run saw %q, want %q", got, want)
	}

	// A changed list: only what it names goes.
	custom := *te
	custom.tc.Settings.Shell.ScrubEnv = []string{"PLAIN_*", "DB_PASSWORD"}
	if got, want := strings.Join(seenNames(t, &custom), " "),
		"FOO_TOKEN MY_SECRET_X OPENAI_API_KEY OPENAI_BASE_URL"; got != want {
		t.Errorf("custom list: saw %q, want %q", got, want)
	}

	// shell.env entries are explicit configuration: kept even when they
	// match a pattern.
	explicit := *te
	explicit.tc.Settings.Shell.Env = map[string]string{"FOO_TOKEN": "tok-scrub-test"}
	if got, want := strings.Join(seenNames(t, &explicit), " "), "FOO_TOKEN OPENAI_BASE_URL PLAIN_SCRUB_VAR"; got != want {
		t.Errorf("with shell.env FOO_TOKEN: saw %q, want %q", got, want)
	}
}

// A running shell started without the list must not be reused for a model
// call that has one, and the other way round: the cache key tells them apart.
func TestScrubEnvIsPartOfTheCacheKey(t *testing.T) {
	a := ShellConfig{Path: "/bin/bash"}
	b := ShellConfig{Path: "/bin/bash", ScrubEnv: DefaultScrubEnv()}
	c := ShellConfig{Path: "/bin/bash", ScrubEnv: []string{"*_TOKEN"}}
	if a.cacheKey("") == b.cacheKey("") || b.cacheKey("") == c.cacheKey("") {
		t.Errorf("cache keys collide: %q %q %q", a.cacheKey(""), b.cacheKey(""), c.cacheKey(""))
	}
	if b.cacheKey("") != (ShellConfig{Path: "/bin/bash", ScrubEnv: DefaultScrubEnv()}).cacheKey("") {
		t.Error("equal configs must share a key")
	}
}

func TestScrubEnvOnThePTYPath(t *testing.T) {
	setSecretEnv(t)
	t.Setenv("AGENTSH_NO_PTY", "")
	t.Setenv("PI_NO_PTY", "")
	ui := &fakeUI{cols: 200, rows: 50}
	te := ptyToolEnv(t, ui)
	te.tc.Settings.Shell.ScrubEnv = DefaultScrubEnv()
	if got, want := strings.Join(seenNames(t, te), " "), "OPENAI_BASE_URL PLAIN_SCRUB_VAR"; got != want {
		t.Errorf("PTY command saw %q, want only %q", got, want)
	}
	// A plain command on the PTY path streams without the overlay: that
	// the path was taken shows in a terminal on stdout.
	if r := te.exec(t, ToolParams{Command: ttyProbe}); r.Content != "tty 50 200\n" {
		t.Fatalf("the PTY path was not taken: %+v", r)
	}
}

func TestValidScrubPattern(t *testing.T) {
	for _, p := range append(DefaultScrubEnv(), "A?B", "[AB]_KEY") {
		if err := ValidScrubPattern(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "[", "A\\"} {
		if err := ValidScrubPattern(p); err == nil {
			t.Errorf("%q: accepted", p)
		}
	}
}

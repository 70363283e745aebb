package config

import (
	"testing"
	"time"
)

// TestSettingsJobLimits: bash.maxJobs defaults to 16 and
// bash.autoBackgroundSeconds to 60; both read nested or dotted, merge like
// any scalar (null resets) and reach the bash tool's settings.
func TestSettingsJobLimits(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		global, project string
		jobs            int
		after           time.Duration
	}{
		{"", "", 16, 60 * time.Second},
		{`{"bash": {"maxJobs": 2, "autoBackgroundSeconds": 0}}`, "", 2, 0},
		{`{"bash.maxJobs": 40, "bash.autoBackgroundSeconds": 2.5}`, "", 40, 2500 * time.Millisecond},
		{`{"bash.maxJobs": 3}`, `{"bash": {"maxJobs": null, "autoBackgroundSeconds": 120}}`, 16, 120 * time.Second},
		{`{"bash.autoBackgroundSeconds": 5}`, `{"bash.autoBackgroundSeconds": null}`, 16, 60 * time.Second},
	}
	for _, c := range cases {
		s, ts := loadPair(t, dir, c.global, c.project)
		if s.MaxJobs != c.jobs || ts.MaxJobs != c.jobs {
			t.Errorf("%s + %s: maxJobs settings %d, tool %d, want %d", c.global, c.project, s.MaxJobs, ts.MaxJobs, c.jobs)
		}
		if ts.AutoBackground != c.after {
			t.Errorf("%s + %s: autoBackground %v, want %v", c.global, c.project, ts.AutoBackground, c.after)
		}
	}
}

// TestSettingsJobLimitsRefused: a limit below one, fractional or not a
// number, and a negative or absurd auto-background time are errors at
// their position.
func TestSettingsJobLimitsRefused(t *testing.T) {
	dir := t.TempDir()
	const jobsRange = "bash.maxJobs: must be a whole number of jobs from 1 to 1048576, got "
	const afterRange = "bash.autoBackgroundSeconds: must be a number of seconds from 0 (never) to 86400, got "
	cases := []struct{ content, want string }{
		{`{"bash": {"maxJobs": 0}}`, `:1:22: ` + jobsRange + `number 0`},
		{`{"bash.maxJobs": -3}`, `:1:18: ` + jobsRange + `number -3`},
		{`{"bash.maxJobs": 2.5}`, `:1:18: ` + jobsRange + `number 2.5`},
		{"{\n  \"bash.maxJobs\": \"4\"\n}", `:2:19: ` + jobsRange + `string "4"`},
		{`{"bash.maxJobs": 1e9}`, `:1:18: ` + jobsRange + `number 1000000000`},
		{`{"bash": {"autoBackgroundSeconds": -1}}`, `:1:36: ` + afterRange + `number -1`},
		{`{"bash.autoBackgroundSeconds": true}`, `:1:32: ` + afterRange + `boolean true`},
		{`{"bash.autoBackgroundSeconds": 1e6}`, `:1:32: ` + afterRange + `number 1000000`},
	}
	for _, c := range cases {
		p := writeSettings(t, dir, c.content)
		_, err := LoadSettingsFrom(p, "")
		if err == nil {
			t.Errorf("%q: no error", c.content)
			continue
		}
		if want := "settings: " + p + c.want; err.Error() != want {
			t.Errorf("%q:\n got  %q\n want %q", c.content, err, want)
		}
	}
}

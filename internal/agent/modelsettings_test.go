package agent

import (
	"agentsh/internal/config"
	"strings"
	"testing"
	"time"
)

func TestModelSettingsOf(t *testing.T) {
	ms, err := config.ModelSettingsOf(settingsFrom(t, `{"defaultThinkingLevel":"high","enabledModels":["openai/a","anthropic/*"],
		"retry":{"enabled":false,"maxRetries":2,"baseDelayMs":250,"maxDelayMs":1000}}`))
	if err != nil {
		t.Fatal(err)
	}
	if ms.ThinkingLevel != "high" || strings.Join(ms.Enabled, ",") != "openai/a,anthropic/*" || ms.RetryEnabled ||
		ms.MaxRetries != 2 || ms.BaseDelay != 250*time.Millisecond || ms.MaxDelay != time.Second {
		t.Errorf("settings %+v", ms)
	}
	r := NewRetryOf(ms)
	if r.Enabled() || r.MaxRetries != 2 || r.delay(1) != 250*time.Millisecond || r.delay(2) != 500*time.Millisecond ||
		r.delay(5) != time.Second {
		t.Errorf("retry %+v: delays %v %v %v", r, r.delay(1), r.delay(2), r.delay(5))
	}

	ms, err = config.ModelSettingsOf(settingsFrom(t, `{}`))
	if err != nil || ms.ThinkingLevel != "" || !ms.RetryEnabled {
		t.Errorf("defaults %+v %v", ms, err)
	}
	if r := NewRetryOf(ms); r.MaxRetries != DefaultMaxRetries || r.delay(1) != DefaultRetryBaseMs*time.Millisecond || !r.Enabled() {
		t.Errorf("default retry %+v", r)
	}

	_, err = config.ModelSettingsOf(settingsFrom(t, `{"defaultThinkingLevel":"max"}`))
	if err == nil || err.Error() != "settings: defaultThinkingLevel: must be one of off, minimal, low, medium, high, xhigh, got max" {
		t.Errorf("bad level: %v", err)
	}
	if _, err = config.ModelSettingsOf(settingsFrom(t, `{"retry":{"enabled":"yes"}}`)); err == nil {
		t.Error("retry.enabled as a string is accepted")
	}
}

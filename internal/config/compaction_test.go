package config

import (
	"testing"
)

func TestCompactionSettings(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct{ content, want string }{
		{`{"compaction": 5}`, `:1:16: compaction: expected object, got number`},
		{`{"compaction": {"enabled": "yes"}}`, `:1:28: compaction.enabled: expected boolean, got string "yes"`},
		{`{"compaction.reserveTokens": -1}`, `:1:30: compaction.reserveTokens: must be a whole number of tokens, got number -1`},
		{`{"compaction": {"keepRecentTokens": 1.5}}`, `:1:37: compaction.keepRecentTokens: must be a whole number of tokens, got number 1.5`},
		{`{"compaction": {"contextWindow": {"gpt": 1000, "llama": "big"}}}`, `:1:57: compaction.contextWindow.llama: must be a whole number of tokens, got string "big"`},
		{`{"compaction.contextWindow": {"gpt-4.1": true}}`, `:1:42: compaction.contextWindow.gpt-4.1: must be a whole number of tokens, got boolean true`},
	} {
		p := writeSettings(t, dir, c.content)
		_, err := LoadSettingsFrom(p, "")
		if err == nil || err.Error() != "settings: "+p+c.want {
			t.Errorf("%s: %v, want %s", c.content, err, c.want)
		}
	}

	s := loadOK(t, writeSettings(t, dir, `{"compaction": {"enabled": false, "reserveTokens": 2000, "contextWindow": {"gpt-4": 9000, "gpt-4.1": 50000, "local/llama": 4000}}}`), "")
	cs, err := CompactionSettingsFrom(s)
	if err != nil {
		t.Fatal(err)
	}
	if cs.Enabled || cs.ReserveTokens != 2000 {
		t.Errorf("settings %+v", cs)
	}
	// The longest matching name prefix wins; a provider prefix is read
	// past unless the table names it; unknown models keep what llm knows.
	for model, want := range map[string]int{"gpt-4.1-mini": 50000, "openai/gpt-4-0613": 9000, "local/llama-3": 4000,
		"llama-3": 0, "claude-sonnet-4": 200_000} {
		if got := cs.Window(model); got != want {
			t.Errorf("Window(%s) = %d, want %d", model, got, want)
		}
	}
	def, _ := CompactionSettingsFrom(nil)
	if !def.Enabled || def.Reserve(200_000) != 30_000 || def.Reserve(1_000_000) != 150_000 || def.Reserve(128_000) != 19_200 ||
		def.Reserve(8000) != 1200 || def.KeepRecent(200_000) != 40_000 || def.KeepRecent(0) != DefaultKeepRecentTokens {
		t.Errorf("defaults: reserve %d %d %d %d keep %d %d", def.Reserve(200_000), def.Reserve(1_000_000), def.Reserve(128_000),
			def.Reserve(8000), def.KeepRecent(200_000), def.KeepRecent(0))
	}
}

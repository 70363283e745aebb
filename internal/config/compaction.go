package config

import (
	"agentsh/internal/llm"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Compaction settings (settings.json "compaction": {...}).
const (
	// DefaultReserveTokens is kept free below the window for the next
	// prompt and answer when compaction.reserveTokens is not set (at least
	// 15% of the window, as the reference reserves).
	DefaultReserveTokens = 16384
	// DefaultKeepRecentTokens is how much of the newest conversation a
	// compaction keeps word for word when the window is not known.
	DefaultKeepRecentTokens = 20000
)

// CompactionSettings are the "compaction" keys of the settings files.
type CompactionSettings struct {
	Enabled bool // compaction.enabled (default true): compact automatically near the window
	// ReserveTokens is compaction.reserveTokens: compaction starts when the
	// context exceeds the window minus this; 0 = the default.
	ReserveTokens int
	// KeepRecentTokens is compaction.keepRecentTokens: how much of the
	// newest conversation is kept; 0 = a fifth of the window.
	KeepRecentTokens int
	// ContextWindow is compaction.contextWindow as a number (every model);
	// ContextWindows is it as a table of model name (or name prefix) to
	// window. Both override what agentsh knows of the model.
	ContextWindow  int
	ContextWindows map[string]int
}

// maxSettingTokens bounds the token counts of the settings: past it a
// value is a typo.
const maxSettingTokens = 1 << 40

// tokenSetting reads a setting that counts tokens: a whole number from 0.
func tokenSetting(v any) (int, bool) {
	n, ok := v.(float64)
	if !ok || n != math.Trunc(n) || n < 0 || n > maxSettingTokens {
		return 0, false
	}
	return int(n), true
}

// validateCompaction checks the "compaction" object of a settings file, so
// a typo is reported where it is instead of silently ignored.
func validateCompaction(tree map[string]any, fail func(key, msg string) error) error {
	v, ok := tree["compaction"]
	if !ok || v == nil {
		return nil
	}
	c, ok := v.(map[string]any)
	if !ok {
		return fail("compaction", "expected object, got "+jsonKind(v))
	}
	if v, ok := c["enabled"]; ok && v != nil {
		if _, ok := v.(bool); !ok {
			return fail("compaction.enabled", "expected boolean, got "+jsonValue(v))
		}
	}
	tokens := func(key string, v any) error {
		if _, ok := tokenSetting(v); !ok {
			return fail(key, "must be a whole number of tokens, got "+jsonValue(v))
		}
		return nil
	}
	for _, k := range []string{"reserveTokens", "keepRecentTokens"} {
		if v, ok := c[k]; ok && v != nil {
			if err := tokens("compaction."+k, v); err != nil {
				return err
			}
		}
	}
	if v, ok := c["contextWindow"]; ok && v != nil {
		table, isTable := v.(map[string]any)
		if !isTable {
			return tokens("compaction.contextWindow", v)
		}
		names := make([]string, 0, len(table))
		for name := range table {
			names = append(names, name)
		}
		sort.Strings(names) // report the first bad one, not a random one
		for _, name := range names {
			if err := tokens("compaction.contextWindow."+name, table[name]); err != nil {
				return err
			}
		}
	}
	return nil
}

// CompactionSettingsFrom reads the compaction keys of s (nil: defaults).
// Settings loaded from files were validated (validateCompaction); a value
// of the wrong kind is an error here too.
func CompactionSettingsFrom(s *Settings) (CompactionSettings, error) {
	c := CompactionSettings{Enabled: true}
	if s == nil {
		return c, nil
	}
	count := func(key string, v any) (int, error) {
		n, ok := tokenSetting(v)
		if !ok {
			return 0, fmt.Errorf("settings: %s: must be a whole number of tokens, got %s", key, jsonValue(v))
		}
		return n, nil
	}
	var err error
	if v, ok := s.Lookup("compaction.enabled"); ok && v != nil {
		b, ok := v.(bool)
		if !ok {
			return c, fmt.Errorf("settings: compaction.enabled: expected boolean, got %s", jsonValue(v))
		}
		c.Enabled = b
	}
	if v, ok := s.Lookup("compaction.reserveTokens"); ok && v != nil {
		if c.ReserveTokens, err = count("compaction.reserveTokens", v); err != nil {
			return c, err
		}
	}
	if v, ok := s.Lookup("compaction.keepRecentTokens"); ok && v != nil {
		if c.KeepRecentTokens, err = count("compaction.keepRecentTokens", v); err != nil {
			return c, err
		}
	}
	if v, ok := s.Lookup("compaction.contextWindow"); ok && v != nil {
		if table, ok := v.(map[string]any); ok {
			c.ContextWindows = make(map[string]int, len(table))
			for name, w := range table {
				n, err := count("compaction.contextWindow."+name, w)
				if err != nil {
					return c, err
				}
				c.ContextWindows[strings.ToLower(name)] = n
			}
		} else if c.ContextWindow, err = count("compaction.contextWindow", v); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Window is the context window of model: the settings' override, else
// what llm knows of it (0 = unknown).
func (c CompactionSettings) Window(model string) int {
	if w, ok := c.Override(model); ok {
		return w
	}
	return llm.ContextWindow(model)
}

// override is the settings' context window for model, if they give one.
func (c CompactionSettings) Override(model string) (int, bool) {
	name := strings.ToLower(model)
	best, w := -1, 0
	for prefix, n := range c.ContextWindows {
		short := name
		if i := strings.LastIndexByte(name, '/'); i >= 0 && !strings.Contains(prefix, "/") {
			short = name[i+1:]
		}
		if strings.HasPrefix(short, prefix) && len(prefix) > best {
			best, w = len(prefix), n
		}
	}
	if best >= 0 {
		return w, true
	}
	return c.ContextWindow, c.ContextWindow > 0
}

// Reserve is the room kept free below window: the setting, else at least
// 15% of the window or DefaultReserveTokens, and the 15% alone when the
// default would leave too little of a small window.
func (c CompactionSettings) Reserve(window int) int {
	if c.ReserveTokens > 0 && c.ReserveTokens < window {
		return c.ReserveTokens
	}
	prop := max(window*15/100, 1)
	if r := max(prop, DefaultReserveTokens); r < window-prop {
		return r
	}
	return prop
}

// KeepRecent is how many tokens of the newest conversation a compaction
// keeps.
func (c CompactionSettings) KeepRecent(window int) int {
	switch {
	case c.KeepRecentTokens > 0:
		return c.KeepRecentTokens
	case window > 0:
		return max(window/5, 1)
	}
	return DefaultKeepRecentTokens
}

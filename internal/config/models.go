package config

import (
	"agentsh/internal/llm"
	"fmt"
	"slices"
	"strings"
	"time"
)

// ModelSettings are the settings of models, thinking and retries: the
// reference's keys defaultThinkingLevel, enabledModels and retry.*.
type ModelSettings struct {
	ThinkingLevel string   // defaultThinkingLevel; "" = off
	Enabled       []string // enabledModels
	RetryEnabled  bool     // retry.enabled (default true)
	MaxRetries    int      // retry.maxRetries
	BaseDelay     time.Duration
	MaxDelay      time.Duration
	// RequestTimeout is retry.requestTimeoutMs: how long a model call may
	// go without a byte of its answer; 0 = DefaultRequestTimeout.
	RequestTimeout time.Duration
}

// ModelSettingsOf reads the model settings, with a located error for a
// value of the wrong kind.
func ModelSettingsOf(s *Settings) (ModelSettings, error) {
	ms := ModelSettings{RetryEnabled: true}
	if v, ok := s.Lookup("defaultThinkingLevel"); ok && v != nil {
		str, isStr := v.(string)
		if !isStr || !ValidThinkingLevel(str) {
			return ms, fmt.Errorf("settings: defaultThinkingLevel: must be one of %s, got %v", strings.Join(AllThinkingLevels, ", "), v)
		}
		ms.ThinkingLevel = str
	}
	if v, ok := s.Lookup("enabledModels"); ok && v != nil {
		arr, isArr := v.([]any)
		if !isArr {
			return ms, fmt.Errorf("settings: enabledModels: expected an array of \"provider/model\" strings, got %v", v)
		}
		for _, el := range arr {
			str, isStr := el.(string)
			if !isStr {
				return ms, fmt.Errorf("settings: enabledModels: expected \"provider/model\" strings, got %v", el)
			}
			ms.Enabled = append(ms.Enabled, strings.TrimSpace(str))
		}
	}
	if v, ok := s.Lookup("retry.enabled"); ok && v != nil {
		b, isBool := v.(bool)
		if !isBool {
			return ms, fmt.Errorf("settings: retry.enabled: expected true or false, got %v", v)
		}
		ms.RetryEnabled = b
	}
	num := func(key string) (float64, error) {
		v, ok := s.Lookup(key)
		if !ok || v == nil {
			return 0, nil
		}
		n, isNum := v.(float64)
		if !isNum || n < 0 {
			return 0, fmt.Errorf("settings: %s: expected a number from 0, got %v", key, v)
		}
		return n, nil
	}
	n, err := num("retry.maxRetries")
	if err != nil {
		return ms, err
	}
	ms.MaxRetries = int(n)
	if n, err = num("retry.baseDelayMs"); err != nil {
		return ms, err
	}
	ms.BaseDelay = time.Duration(n * float64(time.Millisecond))
	if n, err = num("retry.maxDelayMs"); err != nil {
		return ms, err
	}
	ms.MaxDelay = time.Duration(n * float64(time.Millisecond))
	if n, err = num("retry.requestTimeoutMs"); err != nil {
		return ms, err
	}
	ms.RequestTimeout = time.Duration(n * float64(time.Millisecond))
	return ms, nil
}

// AllThinkingLevels are the thinking levels in the order cycling goes
// through them, "off" first (the reference's levels without "auto").
var AllThinkingLevels = append([]string{llm.ThinkingOff}, llm.ThinkingLevels...)

// ValidThinkingLevel reports whether level is one of AllThinkingLevels.
func ValidThinkingLevel(level string) bool { return slices.Contains(AllThinkingLevels, level) }

// ThinkingLevelError refuses a level that is not one of AllThinkingLevels.
func ThinkingLevelError(level string) error {
	return fmt.Errorf("Invalid thinking level %q: use %s", level, strings.Join(AllThinkingLevels, ", ")) //lint:ignore ST1005 user-facing text
}

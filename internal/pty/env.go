package pty

import (
	"sort"
	"strings"
)

// NonInteractiveEnv is injected over the inherited environment of every shell
// agentsh starts, so pagers, editors and prompts never wait for a human
// (spec §3; applied to the non-PTY engine too).
var NonInteractiveEnv = map[string]string{
	"PAGER": "cat", "GIT_PAGER": "cat", "MANPAGER": "cat", "SYSTEMD_PAGER": "cat",
	"BAT_PAGER": "cat", "DELTA_PAGER": "cat", "GH_PAGER": "cat", "GLAB_PAGER": "cat",
	"PSQL_PAGER": "cat", "MYSQL_PAGER": "cat", "AWS_PAGER": "", "HOMEBREW_PAGER": "cat",
	"LESS":       "FRX",
	"GIT_EDITOR": "true", "VISUAL": "true", "EDITOR": "true",
	"GIT_TERMINAL_PROMPT": "0", "SSH_ASKPASS": "/usr/bin/false", "CI": "1",
	"npm_config_yes": "true", "npm_config_update_notifier": "false",
	"npm_config_fund": "false", "npm_config_audit": "false", "npm_config_progress": "false",
	"PNPM_DISABLE_SELF_UPDATE_CHECK": "true", "YARN_ENABLE_PROGRESS_BARS": "0",
	"CARGO_TERM_PROGRESS_WHEN": "never", "DEBIAN_FRONTEND": "noninteractive",
	"PIP_NO_INPUT": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1",
	"TF_INPUT": "0", "TF_IN_AUTOMATION": "1", "GH_PROMPT_DISABLED": "1",
	"COMPOSER_NO_INTERACTION": "1", "CLOUDSDK_CORE_DISABLE_PROMPTS": "1",
}

// dropEnv lists inherited variables that would change how the session shell
// itself starts or reads its input.
var dropEnv = map[string]bool{"BASH_ENV": true, "ENV": true, "PROMPT_COMMAND": true, "PS4": true,
	"SHELLOPTS": true, "BASHOPTS": true, "BASH_XTRACEFD": true}

// BuildEnv merges the inherited environment, the hardening set, the shell
// config's env and extra entries (later wins), sorted for stable output.
func BuildEnv(base []string, layers ...map[string]string) []string {
	return MergeEnv(base, append([]map[string]string{NonInteractiveEnv}, layers...)...)
}

// MergeEnv is BuildEnv without the hardening set: for a terminal the user
// watches, where pagers and editors are wanted.
func MergeEnv(base []string, layers ...map[string]string) []string {
	m := make(map[string]string, len(base)+len(NonInteractiveEnv))
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || dropEnv[k] || strings.HasPrefix(k, "BASH_FUNC_") {
			continue
		}
		m[k] = v
	}
	for _, l := range layers {
		for k, v := range l {
			m[k] = v
		}
	}
	out := make([]string, 0, len(m))
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

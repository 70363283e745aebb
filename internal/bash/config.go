package bash

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// ShellConfig says which shell runs commands and how. Two runs share a cached
// session only when their whole ShellConfig (and session key) is equal.
type ShellConfig struct {
	Path         string            // absolute path of the shell (bash)
	Prefix       string            // optional command prefix: "<prefix> <command>"
	Env          map[string]string // extra environment for the shell
	SnapshotPath string            // rc snapshot sourced once at session start; "" = none
	// LazySnapshot takes the rc snapshot (GetOrCreateSnapshot) on the
	// first run instead of at start-up, when SnapshotPath is "": the TUI
	// draws its first frame without waiting for the user's rc files.
	LazySnapshot bool
	// ScrubEnv are glob patterns of variable names kept from this shell
	// (the model's): provider keys and secrets.
	ScrubEnv []string
}

// ResolveShell picks the shell binary: the configured path if given, else
// $SHELL when it is bash, else bash from PATH or the usual places.
func ResolveShell(configured string) (string, error) {
	if configured != "" {
		p, err := exec.LookPath(configured)
		if err != nil {
			return "", fmt.Errorf("custom shell path not found: %s", configured)
		}
		return filepath.Abs(p)
	}
	if sh := os.Getenv("SHELL"); sh != "" && strings.Contains(filepath.Base(sh), "bash") {
		if st, err := os.Stat(sh); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return sh, nil
		}
	}
	if p, err := exec.LookPath("bash"); err == nil {
		return filepath.Abs(p)
	}
	for _, p := range []string{"/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash"} {
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no bash found on PATH")
}

// cacheKey serializes the config and session key; env entries are sorted so
// map order never splits the cache.
func (c ShellConfig) cacheKey(sessionKey string) string {
	var b strings.Builder
	b.WriteString(sessionKey)
	b.WriteByte('\n')
	b.WriteString(c.Path)
	b.WriteByte('\n')
	b.WriteString(c.Prefix)
	b.WriteByte('\n')
	b.WriteString(c.SnapshotPath)
	keys := make([]string, 0, len(c.Env))
	for k := range c.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		b.WriteByte('\n')
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(c.Env[k])
	}
	return b.String()
}

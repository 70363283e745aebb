package xdg

import (
	"fmt"
	"os"
	"path/filepath"
)

// appName is the directory name used under the XDG base directories.
const appName = "agentsh"

// DataDir returns $XDG_DATA_HOME/agentsh, else $HOME/.local/share/agentsh.
//
// A relative XDG_DATA_HOME is ignored, as the XDG base directory spec requires,
// because it would make the location depend on the process's cwd.
func DataDir() string {
	return xdgDir("XDG_DATA_HOME", filepath.Join(".local", "share"))
}

// ConfigDir returns $XDG_CONFIG_HOME/agentsh, else $HOME/.config/agentsh.
//
// A relative XDG_CONFIG_HOME is ignored for the same reason as in DataDir.
func ConfigDir() string {
	return xdgDir("XDG_CONFIG_HOME", ".config")
}

func xdgDir(envVar, homeRel string) string {
	if v := os.Getenv(envVar); v != "" && filepath.IsAbs(v) {
		return filepath.Join(v, appName)
	}
	if home := Home(); home != "" {
		return filepath.Join(home, homeRel, appName)
	}
	// Without HOME (some containers and service managers) a per-user temp
	// location is still better than a path relative to wherever we started.
	return filepath.Join(os.TempDir(), fmt.Sprintf("%s-%d", appName, os.Getuid()), homeRel)
}

// Home is the user's home folder, cleaned; "" when unknown or relative.
func Home() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || !filepath.IsAbs(home) {
		return ""
	}
	return filepath.Clean(home)
}

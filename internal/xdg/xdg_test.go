package xdg

import (
	"path/filepath"
	"testing"
)

func TestDataDirAndConfigDir(t *testing.T) {
	t.Setenv("HOME", "/home/u")

	t.Setenv("XDG_DATA_HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	if got, want := DataDir(), "/home/u/.local/share/agentsh"; got != want {
		t.Errorf("DataDir() unset XDG = %q, want %q", got, want)
	}
	if got, want := ConfigDir(), "/home/u/.config/agentsh"; got != want {
		t.Errorf("ConfigDir() unset XDG = %q, want %q", got, want)
	}

	t.Setenv("XDG_DATA_HOME", "/xdg/data")
	t.Setenv("XDG_CONFIG_HOME", "/xdg/config")
	if got, want := DataDir(), "/xdg/data/agentsh"; got != want {
		t.Errorf("DataDir() with XDG = %q, want %q", got, want)
	}
	if got, want := ConfigDir(), "/xdg/config/agentsh"; got != want {
		t.Errorf("ConfigDir() with XDG = %q, want %q", got, want)
	}

	// The XDG spec says relative values are invalid and must be ignored.
	t.Setenv("XDG_DATA_HOME", "rel/data")
	t.Setenv("XDG_CONFIG_HOME", "rel/config")
	if got, want := DataDir(), "/home/u/.local/share/agentsh"; got != want {
		t.Errorf("DataDir() relative XDG = %q, want %q", got, want)
	}
	if got, want := ConfigDir(), "/home/u/.config/agentsh"; got != want {
		t.Errorf("ConfigDir() relative XDG = %q, want %q", got, want)
	}
}

func TestDataDirWithoutHome(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_DATA_HOME", "")
	got := DataDir()
	if !filepath.IsAbs(got) {
		t.Fatalf("DataDir() without HOME = %q, want an absolute path", got)
	}
}

package config

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestSettingsFileNotRegular: a project settings file the model made a
// FIFO, or a link to /dev/zero or a FIFO, is refused with an error that
// names it, instead of blocking agentsh
// forever or reading without end (a file the model writes must not stop
// the user's shell).
func TestSettingsFileNotRegular(t *testing.T) {
	for _, kind := range []string{"fifo", "link to /dev/zero", "link to a fifo", "huge"} {
		t.Run(kind, func(t *testing.T) {
			dir := t.TempDir()
			path := ProjectSettingsPath(dir)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				t.Fatal(err)
			}
			var err error
			switch kind {
			case "fifo":
				err = syscall.Mkfifo(path, 0o644)
			case "link to /dev/zero":
				err = os.Symlink("/dev/zero", path)
			case "link to a fifo":
				fifo := filepath.Join(dir, "f")
				if err = syscall.Mkfifo(fifo, 0o644); err == nil {
					err = os.Symlink(fifo, path)
				}
			case "huge":
				err = os.WriteFile(path, []byte(`{"x":"`+strings.Repeat("a", maxSettingsBytes)+`"}`), 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() {
				_, err := LoadSettingsFrom("", path)
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), path) {
					t.Errorf("LoadSettingsFrom: %v, want an error naming %s", err, path)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("LoadSettingsFrom hangs on the file")
			}
		})
	}
}

// TestLiveSettingsBecomesFIFO: the project file replaced by a FIFO during
// the session makes the next command's settings an error, not a hang.
func TestLiveSettingsBecomesFIFO(t *testing.T) {
	path := writeSettings(t, t.TempDir(), `{}`)
	l, err := WatchSettingsFrom("", path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Current()
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), path+": not a regular file") {
			t.Errorf("Current: %v, want %s refused", err, path)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Current hangs on the FIFO")
	}
}

package config

import "testing"

// isolateConfig gives the test a config folder of its own: where the
// user's trust answers and "always" rules are written.
func isolateConfig(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_CONFIG_HOME", t.TempDir())
}

// isolateData points the XDG data dir at a fresh temp folder.
func isolateData(t *testing.T) {
	t.Helper()
	t.Setenv("XDG_DATA_HOME", t.TempDir())
}

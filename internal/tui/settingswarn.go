package tui

import (
	"agentsh/internal/config"
	"errors"
	"os"
	"path/filepath"
	"strings"
)

// settingsWatch follows whether the settings files load: a file
// broken at start or saved broken leaves a warning on the status line until
// a load finds it fixed. The files are looked at when something may have
// changed them: at start, after each `!` command and after each turn of the
// model.
type settingsWatch struct {
	err    error // why the files do not load now; nil when they do
	status string
}

// check reads the files as they are now; fixed says that they load again
// after they did not.
func (w *settingsWatch) check(live *config.LiveSettings, cwd string) (fixed bool) {
	if live == nil {
		return false
	}
	_, err := live.Current()
	fixed = w.err != nil && err == nil
	w.err, w.status = err, ""
	if err != nil {
		w.status = "settings do not load"
		var se *config.SettingsError
		if errors.As(err, &se) {
			w.status = "⚠ " + shortPath(se.File, cwd) + " does not load"
		}
	}
	return fixed
}

// shortPath names file relative to cwd when it is under it, else with ~
// for the home folder.
func shortPath(file, cwd string) string {
	if rel, err := filepath.Rel(cwd, file); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" && strings.HasPrefix(file, home+"/") {
		return "~" + strings.TrimPrefix(file, home)
	}
	return file
}

// checkSettings looks at the settings files again and says in the
// transcript when they load again.
func (m *model) checkSettings() {
	if m.settings.check(m.cfg.Settings, m.session().Cwd()) {
		m.tr.notice(kindInfo, settingsFixedNotice)
	}
}

// settingsAtStart warns, after the welcome, that a settings file does not
// load: the TUI started on the defaults.
func (m *model) settingsAtStart() {
	m.settings.check(m.cfg.Settings, m.session().Cwd())
	if m.settings.err != nil {
		m.tr.notice(kindWarning, settingsWarning(m.settings.err.Error(), true))
	}
}

// settingsFixedNotice follows the load that found the settings files fixed.
const settingsFixedNotice = "The settings files load again: `!` commands and the model's commands use them."

// settingsWarning says what is wrong where (err names the file, line and
// column) and what that means until it is fixed: `!` commands run with the
// last settings that loaded, or the defaults when none did (a file broken
// at start); the model's commands are refused.
func settingsWarning(err string, defaults bool) string {
	with := "the last settings that loaded"
	if defaults {
		with = "the default settings"
	}
	return err + "\n`!` commands run with " + with + " until the file is fixed; the model's commands are refused."
}

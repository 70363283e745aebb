package main

import (
	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/jobs"
	"fmt"
	"io"
	"os"
)

// newModels is the process's current model (spec, "" for none) and
// thinking level (--thinking, else settings defaultThinkingLevel), with the
// settings' enabledModels, and its auto-retry (retry.*).
func newModels(o printOptions, spec string, live *config.LiveSettings) (*agent.Models, *agent.Retry, error) {
	settings, _ := live.Current()
	ms, err := config.ModelSettingsOf(settings)
	if err != nil {
		return nil, nil, err
	}
	level := ms.ThinkingLevel
	if o.thinking != "" {
		level = o.thinking
	}
	models, err := agent.NewModels(spec, agent.ModelsOptions{Getenv: os.Getenv, ThinkingLevel: level, Enabled: ms.Enabled})
	if err != nil {
		return nil, nil, err
	}
	return models, agent.NewRetryOf(ms), nil
}

// restoreOf says whether the session a mode starts on, when resumed,
// continues with the model and level it recorded last: not when --model
// or --thinking chose.
func restoreOf(o printOptions) bool { return o.model == "" && o.thinking == "" }

// newSessions is the one owner of a mode's conversations (agent.Sessions):
// the executor, settings, jobs, sandbox and models they share. restore is
// whether a saved conversation opened later continues with its model.
// What goes wrong on the side is said on stderr while warn says so.
func newSessions(o printOptions, cwd string, live *config.LiveSettings, ts bash.ToolSettings, jm *jobs.Manager,
	models *agent.Models, retry *agent.Retry, restore bool, warn func() bool, stderr io.Writer) *agent.Sessions {
	return agent.NewSessions(agent.SessionsConfig{
		Cwd: cwd, Live: live, Executor: bash.Default(), Shell: ts.Shell, Jobs: jm, Sandbox: o.sb,
		Models: models, Retry: retry, NoSave: o.noSession, RestoreModel: restore,
		Warn: func(msg string) {
			if warn == nil || warn() {
				fmt.Fprintf(stderr, "agentsh: %s\n", msg)
			}
		},
	})
}

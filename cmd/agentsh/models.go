package main

import (
	"os"

	"agentsh/internal/session"
)

// newModels is the process's current model (spec, "" for none) and
// thinking level (--thinking, else settings defaultThinkingLevel), with the
// settings' enabledModels, and its auto-retry (retry.*).
func newModels(o printOptions, spec string, live *session.LiveSettings) (*session.Models, *session.Retry, error) {
	settings, _ := live.Current()
	ms, err := session.ModelSettingsOf(settings)
	if err != nil {
		return nil, nil, err
	}
	level := ms.ThinkingLevel
	if o.thinking != "" {
		level = o.thinking
	}
	models, err := session.NewModels(spec, session.ModelsOptions{Getenv: os.Getenv, ThinkingLevel: level, Enabled: ms.Enabled})
	if err != nil {
		return nil, nil, err
	}
	return models, ms.NewRetryOf(), nil
}

// attachModels makes agent's loop read models and retry at every call. A
// resumed session continues with the model and level it recorded last,
// unless --model or --thinking chose one. A new session records the model
// it starts with, as the reference does (its first entries are the model
// and level; they are written with the first message), then every change.
func attachModels(agent *session.AgentSession, models *session.Models, retry *session.Retry, o printOptions) error {
	return attachModelsRestoring(agent, models, retry, o.model == "" && o.thinking == "")
}

// attachModelsRestoring is attachModels; restore says whether a resumed
// session's own model and level come back.
func attachModelsRestoring(agent *session.AgentSession, models *session.Models, retry *session.Retry, restore bool) error {
	agent.SetModels(models)
	agent.SetRetry(retry)
	if len(agent.Messages()) == 0 {
		return agent.RecordModelsOf(models)
	}
	if restore {
		return agent.RestoreModel(models)
	}
	return nil
}

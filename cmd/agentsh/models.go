package main

import (
	"agentsh/internal/agent"
	"agentsh/internal/config"
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

// attachModels makes agent's loop read models and retry at every call. A
// resumed session continues with the model and level it recorded last,
// unless --model or --thinking chose one. A new session records the model
// it starts with, as the reference does (its first entries are the model
// and level; they are written with the first message), then every change.
func attachModels(agent *agent.AgentSession, models *agent.Models, retry *agent.Retry, o printOptions) error {
	return attachModelsRestoring(agent, models, retry, o.model == "" && o.thinking == "")
}

// attachModelsRestoring is attachModels; restore says whether a resumed
// session's own model and level come back.
func attachModelsRestoring(agent *agent.AgentSession, models *agent.Models, retry *agent.Retry, restore bool) error {
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

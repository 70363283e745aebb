package agent

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"agentsh/internal/config"
	"agentsh/internal/llm"
)

// Model is a model as the reference describes one (get_available_models,
// set_model). Cost is per million tokens; agentsh knows no prices, so it is
// 0 (unknown) unless a provider says otherwise.
type Model struct {
	ID            string    `json:"id"`
	Name          string    `json:"name"`
	API           string    `json:"api"`
	Provider      string    `json:"provider"`
	BaseURL       string    `json:"baseUrl"`
	Reasoning     bool      `json:"reasoning"`
	Input         []string  `json:"input"`
	Cost          ModelCost `json:"cost"`
	ContextWindow int       `json:"contextWindow"`
	MaxTokens     int       `json:"maxTokens"`
}

// ModelCost is a model's price in USD per million tokens.
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Spec is the model as "provider/id".
func (m Model) Spec() string { return m.Provider + "/" + m.ID }

// ModelsOptions configure NewModels.
type ModelsOptions struct {
	// Getenv reads the providers' keys and URLs (os.Getenv in production).
	Getenv func(string) string
	// ThinkingLevel is the level to start with ("" = off).
	ThinkingLevel string
	// Enabled are "provider/id" models (or patterns such as "openai/gpt-*")
	// from the settings' enabledModels: they limit the available models,
	// and cycling goes through the exact ones among them.
	Enabled []string
	// ListTimeout bounds one provider's model listing (default 10 s).
	ListTimeout time.Duration
}

// Models is the current model of the process (provider, model id and
// thinking level), changeable at run time, and the providers configured
// in the environment. The agent loop reads it at every model call, so a
// switch applies from the next call. It is safe for concurrent use.
type Models struct {
	getenv  func(string) string
	enabled []string
	timeout time.Duration

	mu        sync.Mutex
	providers map[string]llm.Provider // built on first use
	provider  llm.Provider            // nil: no model configured
	model     string
	initial   [2]string                  // the provider and model given at start: available whatever the listing says
	level     string                     // as chosen; the effective one is clamped to the model
	listed    map[string][]llm.ModelInfo // successful listings, per provider
}

// NewModels starts with spec ("provider/model", "" for none), whose
// provider is built from the environment as llm.FromEnv does.
func NewModels(spec string, opts ModelsOptions) (*Models, error) {
	m := newModels(opts)
	if opts.ThinkingLevel != "" {
		if !config.ValidThinkingLevel(opts.ThinkingLevel) {
			return nil, config.ThinkingLevelError(opts.ThinkingLevel)
		}
		m.level = opts.ThinkingLevel
	}
	if strings.TrimSpace(spec) != "" {
		p, id, err := llm.FromEnv(spec, m.getenv)
		if err != nil {
			return nil, err
		}
		m.providers[p.Name()] = p
		m.provider, m.model = p, id
		m.initial = [2]string{p.Name(), id}
	}
	return m, nil
}

// ModelsOf is a Models on a provider already built, for a caller that holds
// one (tests): its current model is p's id, and p serves every model of
// p's provider. No environment is read, so no other provider is
// configured. A nil p: no model.
func ModelsOf(p llm.Provider, id string) *Models {
	m := newModels(ModelsOptions{})
	if p != nil {
		m.providers[p.Name()] = p
		m.provider, m.model = p, id
		m.initial = [2]string{p.Name(), id}
	}
	return m
}

func newModels(opts ModelsOptions) *Models {
	m := &Models{getenv: opts.Getenv, enabled: opts.Enabled, timeout: opts.ListTimeout,
		providers: map[string]llm.Provider{}, listed: map[string][]llm.ModelInfo{}, level: llm.ThinkingOff}
	if m.getenv == nil {
		m.getenv = func(string) string { return "" }
	}
	if m.timeout <= 0 {
		m.timeout = 10 * time.Second
	}
	return m
}

// Current is the model to call now: its provider (nil when none is
// configured), the model id, and the effective thinking level ("off" for a
// model that does not think). With a level chosen, whether the model thinks
// is asked of its provider's listing the first time (within ctx).
func (m *Models) Current(ctx context.Context) (llm.Provider, string, string) {
	m.mu.Lock()
	p, level := m.provider, m.level
	m.mu.Unlock()
	if p != nil && level != llm.ThinkingOff {
		m.list(ctx, p.Name())
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.provider, m.model, m.effectiveLocked()
}

// Provider is the current model's provider (nil when none) and id.
func (m *Models) Provider() (llm.Provider, string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.provider, m.model
}

// Spec is the current model as "provider/id" ("" when none).
func (m *Models) Spec() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.provider == nil {
		return ""
	}
	return m.provider.Name() + "/" + m.model
}

// ThinkingLevel is the effective thinking level of the current model.
func (m *Models) ThinkingLevel() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.effectiveLocked()
}

func (m *Models) effectiveLocked() string {
	if m.provider == nil || !m.reasoningLocked(m.provider.Name(), m.model) {
		return llm.ThinkingOff
	}
	return m.level
}

// reasoningLocked says whether a model thinks: as its provider's listing
// says, else as the table of well-known models says.
func (m *Models) reasoningLocked(provider, id string) bool {
	for _, info := range m.listed[provider] {
		if info.ID == id {
			return info.Reasoning
		}
	}
	return llm.IsReasoningModel(id)
}

// CurrentModel is the current model's description (false when none).
func (m *Models) CurrentModel() (Model, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.provider == nil {
		return Model{}, false
	}
	return m.describeLocked(m.provider.Name(), m.model), true
}

// describeLocked makes the Model of provider/id from the provider's
// listing, or from the table of well-known models when it was not listed.
func (m *Models) describeLocked(provider, id string) Model {
	info := llm.ModelInfo{ID: id, Name: id, ContextWindow: llm.ContextWindow(id), MaxTokens: llm.MaxOutputTokens(id),
		Reasoning: llm.IsReasoningModel(id)}
	for _, li := range m.listed[provider] {
		if li.ID == id {
			info = li
		}
	}
	api := llm.APIOpenAICompletions
	if provider == "anthropic" {
		api = llm.APIAnthropicMessages
	}
	name := info.Name
	if name == "" {
		name = id
	}
	return Model{ID: id, Name: name, API: api, Provider: provider, BaseURL: m.baseURL(provider),
		Reasoning: info.Reasoning, Input: []string{"text"}, ContextWindow: info.ContextWindow, MaxTokens: info.MaxTokens}
}

// baseURL is where provider's requests go, as llm.FromEnv decides.
func (m *Models) baseURL(provider string) string {
	env := func(k string) string { return strings.TrimSpace(m.getenv(k)) }
	switch provider {
	case "openai":
		if b := env("OPENAI_BASE_URL"); b != "" {
			return b
		}
		return llm.DefaultOpenAIBaseURL
	case "anthropic":
		if b := env("ANTHROPIC_BASE_URL"); b != "" {
			return b
		}
		return llm.DefaultAnthropicBaseURL
	case "ollama":
		host := env("OLLAMA_HOST")
		if host == "" {
			return llm.DefaultOllamaBaseURL
		}
		if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		host = strings.TrimRight(host, "/")
		if !strings.HasSuffix(host, "/v1") {
			host += "/v1"
		}
		return host
	case "openrouter":
		return llm.DefaultOpenRouterBaseURL
	}
	return ""
}

// ConfiguredProviders are the providers the environment has credentials
// or an address for (the rules of llm.FromEnv; ollama only with
// OLLAMA_HOST), and the current model's, in llm.Providers order.
func (m *Models) ConfiguredProviders() []string {
	env := func(k string) bool { return strings.TrimSpace(m.getenv(k)) != "" }
	m.mu.Lock()
	cur := ""
	if m.provider != nil {
		cur = m.provider.Name()
	}
	m.mu.Unlock()
	var out []string
	for _, p := range llm.Providers {
		ok := p == cur
		switch p {
		case "openai":
			base := strings.TrimRight(strings.TrimSpace(m.getenv("OPENAI_BASE_URL")), "/")
			ok = ok || env("OPENAI_API_KEY") || (base != "" && base != llm.DefaultOpenAIBaseURL)
		case "anthropic":
			ok = ok || env("ANTHROPIC_API_KEY")
		case "ollama":
			ok = ok || env("OLLAMA_HOST")
		case "openrouter":
			ok = ok || env("OPENROUTER_API_KEY")
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// providerFor returns the (cached) provider named name; id is the model
// asked for, named in an error.
func (m *Models) providerFor(name, id string) (llm.Provider, error) {
	m.mu.Lock()
	p := m.providers[name]
	m.mu.Unlock()
	if p != nil {
		return p, nil
	}
	p, _, err := llm.FromEnv(name+"/"+id, m.getenv)
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if q := m.providers[name]; q != nil {
		return q, nil
	}
	m.providers[name] = p
	return p, nil
}

// list returns provider's models: its server's listing (asked once per
// process; a failed one is asked again next time), or nil when it cannot
// list or the listing failed.
func (m *Models) list(ctx context.Context, provider string) []llm.ModelInfo {
	m.mu.Lock()
	infos, ok := m.listed[provider]
	m.mu.Unlock()
	if ok {
		return infos
	}
	p, err := m.providerFor(provider, "models")
	if err != nil {
		return nil
	}
	lister, isLister := p.(llm.ModelLister)
	if !isLister {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, m.timeout)
	defer cancel()
	infos, err = lister.ListModels(ctx)
	if err != nil {
		return nil
	}
	if infos == nil {
		infos = []llm.ModelInfo{}
	}
	m.mu.Lock()
	m.listed[provider] = infos
	m.mu.Unlock()
	return infos
}

// Available lists the models of the configured providers: each provider's
// listing, and the models configured for it (the current one, the one
// given at start, the enabled ones) also when the listing leaves them out (it failed, the provider
// cannot list, or the server answers for more names than it lists, as
// aliases). The settings' enabledModels, when given, keep only the models
// they match.
func (m *Models) Available(ctx context.Context) []Model {
	var out []Model
	seen := map[string]bool{}
	add := func(md Model) {
		if !seen[md.Spec()] && m.enabledMatch(md.Spec()) {
			seen[md.Spec()] = true
			out = append(out, md)
		}
	}
	for _, prov := range m.ConfiguredProviders() {
		infos := m.list(ctx, prov)
		m.mu.Lock()
		for _, info := range infos {
			add(m.describeLocked(prov, info.ID))
		}
		if m.provider != nil && m.provider.Name() == prov {
			add(m.describeLocked(prov, m.model))
		}
		if m.initial[0] == prov {
			add(m.describeLocked(prov, m.initial[1]))
		}
		for _, e := range m.enabled {
			if p, id, err := llm.ParseModel(e); err == nil && p == prov && !strings.ContainsAny(id, "*?[") {
				add(m.describeLocked(p, id))
			}
		}
		m.mu.Unlock()
	}
	return out
}

// enabledMatch says whether spec is one of the enabled models (always, when
// none are set).
func (m *Models) enabledMatch(spec string) bool {
	if len(m.enabled) == 0 {
		return true
	}
	for _, e := range m.enabled {
		if ok, _ := path.Match(e, spec); ok || e == spec {
			return true
		}
	}
	return false
}

// ModelNotFound is set_model's error for a model that is not available.
func ModelNotFound(provider, id string) error {
	return fmt.Errorf("Model not found: %s/%s", provider, id)
}

// Set switches to provider/id, which must be one of Available's models.
func (m *Models) Set(ctx context.Context, provider, id string) (Model, error) {
	for _, md := range m.Available(ctx) {
		if md.Provider == provider && md.ID == id {
			if err := m.Use(provider, id); err != nil {
				return Model{}, err
			}
			return md, nil
		}
	}
	return Model{}, ModelNotFound(provider, id)
}

// Lookup says whether provider/id is one of Available's models (found),
// and whether provider's server gave a list of models to look in (listed:
// false when the listing failed, was empty, or the provider cannot list).
// A name the user types is checked with it: refused when listed and not
// found.
func (m *Models) Lookup(ctx context.Context, provider, id string) (found, listed bool) {
	for _, md := range m.Available(ctx) {
		if md.Provider == provider && md.ID == id {
			return true, true
		}
	}
	return false, len(m.list(ctx, provider)) > 0
}

// Use switches to provider/id without asking whether the server has it
// (as --model does; a resumed session's model): only the provider must be
// configured.
func (m *Models) Use(provider, id string) error {
	p, err := m.providerFor(provider, id)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.provider, m.model = p, id
	m.mu.Unlock()
	return nil
}

// CycleResult is cycle_model's answer.
type CycleResult struct {
	Model         Model  `json:"model"`
	ThinkingLevel string `json:"thinkingLevel"`
	IsScoped      bool   `json:"isScoped"`
}

// Cycle switches to the next model: of the settings' enabledModels (the
// exact "provider/id" ones whose provider is configured) when there are
// any, else of Available. nil when there is only one model (or none).
func (m *Models) Cycle(ctx context.Context) (*CycleResult, error) {
	var list []Model
	scoped := false
	configured := m.ConfiguredProviders()
	m.mu.Lock()
	for _, e := range m.enabled {
		if p, id, err := llm.ParseModel(e); err == nil && slices.Contains(configured, p) && !strings.ContainsAny(id, "*?[") {
			list = append(list, m.describeLocked(p, id))
		}
	}
	m.mu.Unlock()
	if len(list) > 0 {
		scoped = true
		for _, prov := range configured { // the listings say more about them
			m.list(ctx, prov)
		}
		m.mu.Lock()
		for i, md := range list {
			list[i] = m.describeLocked(md.Provider, md.ID)
		}
		m.mu.Unlock()
	} else {
		list = m.Available(ctx)
	}
	if len(list) <= 1 {
		return nil, nil
	}
	cur := m.Spec()
	i := slices.IndexFunc(list, func(md Model) bool { return md.Spec() == cur })
	next := list[(i+1)%len(list)] // not found (-1): the first
	if err := m.Use(next.Provider, next.ID); err != nil {
		return nil, err
	}
	return &CycleResult{Model: next, ThinkingLevel: m.ThinkingLevel(), IsScoped: scoped}, nil
}

// CanThink says whether the current model thinks. It asks the provider's
// listing once when it was not asked yet.
func (m *Models) CanThink(ctx context.Context) bool {
	m.mu.Lock()
	p := m.provider
	m.mu.Unlock()
	if p == nil {
		return false
	}
	m.list(ctx, p.Name())
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.provider != nil && m.reasoningLocked(m.provider.Name(), m.model)
}

// SetThinkingLevel chooses the thinking level; a model that does not think
// is called with "off" meanwhile, and a switch to one that does applies it.
func (m *Models) SetThinkingLevel(level string) error {
	if !config.ValidThinkingLevel(level) {
		return config.ThinkingLevelError(level)
	}
	m.mu.Lock()
	m.level = level
	m.mu.Unlock()
	return nil
}

// CycleThinkingLevel moves to the next level (off, minimal, low, medium,
// high, xhigh, off …) and returns it; false when the model cannot think.
func (m *Models) CycleThinkingLevel(ctx context.Context) (string, bool) {
	if !m.CanThink(ctx) {
		return "", false
	}
	m.mu.Lock()
	i := slices.Index(config.AllThinkingLevels, m.level)
	m.level = config.AllThinkingLevels[(i+1)%len(config.AllThinkingLevels)]
	level := m.level
	m.mu.Unlock()
	return level, true
}

// SetModels makes the session's agent loop take its model and thinking
// level from ms at every model call (nil: the arguments of Prompt).
func (a *AgentSession) SetModels(ms *Models) { a.models.Store(ms) }

// Models is what SetModels set (nil when none).
func (a *AgentSession) Models() *Models { return a.models.Load() }

// RecordModel writes a model_change and/or thinking_level_change entry to
// the session file when the model (spec, "provider/id") or the level
// differs from the last recorded ones, so a resumed session continues with
// them. A session without a file records nothing.
func (a *AgentSession) RecordModel(spec, level string) error {
	if a.store == nil {
		return nil
	}
	lastModel, lastLevel := a.store.ModelState()
	if spec != "" && spec != lastModel {
		if err := a.store.AppendModelChange(spec); err != nil {
			return err
		}
	}
	// No level recorded yet means off: no entry to say so.
	if level != "" && level != lastLevel && (lastLevel != "" || level != llm.ThinkingOff) {
		return a.store.AppendThinkingLevelChange(level)
	}
	return nil
}

// RecordModelsOf records ms's current model and level (RecordModel).
func (a *AgentSession) RecordModelsOf(ms *Models) error {
	if ms == nil {
		return nil
	}
	return a.RecordModel(ms.Spec(), ms.ThinkingLevel())
}

// RestoreModel switches ms to the model and level the session file last
// recorded (a resumed session continues with them). A model whose provider
// is not configured any more is left as it is, with an error saying so.
func (a *AgentSession) RestoreModel(ms *Models) error {
	if a.store == nil || ms == nil {
		return nil
	}
	spec, level := a.store.ModelState()
	if level != "" && config.ValidThinkingLevel(level) {
		_ = ms.SetThinkingLevel(level)
	}
	if spec == "" || spec == ms.Spec() {
		return nil
	}
	p, id, err := llm.ParseModel(spec)
	if err == nil {
		err = ms.Use(p, id)
	}
	if err != nil {
		return fmt.Errorf("the session's model %s: %w", spec, err)
	}
	return nil
}

// NewRetryOf is the Retry the settings describe.
func NewRetryOf(ms config.ModelSettings) *Retry {
	r := NewRetry(ms.MaxRetries, ms.BaseDelay, ms.MaxDelay)
	r.SetEnabled(ms.RetryEnabled)
	r.RequestTimeout = ms.RequestTimeout
	return r
}

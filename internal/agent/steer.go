package agent

import (
	"context"
	"fmt"

	"agentsh/internal/llm"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

// Queue modes (the reference's steeringMode and followUpMode): how many
// queued messages join the conversation at one step.
const (
	QueueAll        = "all"           // every queued message at once
	QueueOneAtATime = "one-at-a-time" // one per step (the default)
)

// Interrupt modes (the reference's interruptMode). The reference lets a
// steer cut short the tools that are pure waits; agentsh's tools all do
// work, so in both modes a steer waits for the running tool calls.
const (
	InterruptImmediate = "immediate" // the default
	InterruptWait      = "wait"
)

// msgQueues holds the messages a client or the user sent while the agent
// worked (guarded by AgentSession.mu).
type msgQueues struct {
	steering   []*session.UserMessage // delivered at the next step
	followUp   []*session.UserMessage // delivered when the agent would stop
	steerMode  string                 // "" = QueueOneAtATime
	followMode string
	interrupt  string // "" = InterruptImmediate
}

// Steer queues text for the model's next step: after the running tool calls
// finish and before the next model call (or at the start of the next run).
// The message is marked steering, as the reference marks it.
func (a *AgentSession) Steer(text string) {
	m := &session.UserMessage{Text: text, Steering: true, Timestamp: a.now().UnixMilli(), Queued: true, Attribution: "user"}
	a.mu.Lock()
	a.q.steering = append(a.q.steering, m)
	a.mu.Unlock()
}

// FollowUp queues text until the agent would stop: it then joins the
// conversation and the same run goes on with it.
func (a *AgentSession) FollowUp(text string) {
	m := &session.UserMessage{Text: text, Timestamp: a.now().UnixMilli(), Queued: true, Attribution: "user"}
	a.mu.Lock()
	a.q.followUp = append(a.q.followUp, m)
	a.mu.Unlock()
}

func checkQueueMode(what, mode string) error {
	if mode != QueueAll && mode != QueueOneAtATime {
		return fmt.Errorf("invalid %s mode %q (want %q or %q)", what, mode, QueueAll, QueueOneAtATime)
	}
	return nil
}

// SetSteeringMode chooses how many queued steering messages are delivered
// at one step: QueueAll or QueueOneAtATime.
func (a *AgentSession) SetSteeringMode(mode string) error {
	if err := checkQueueMode("steering", mode); err != nil {
		return err
	}
	a.mu.Lock()
	a.q.steerMode = mode
	a.mu.Unlock()
	return nil
}

// SetFollowUpMode chooses how many queued follow-ups are delivered when the
// agent would stop: QueueAll or QueueOneAtATime (one per further turn).
func (a *AgentSession) SetFollowUpMode(mode string) error {
	if err := checkQueueMode("follow-up", mode); err != nil {
		return err
	}
	a.mu.Lock()
	a.q.followMode = mode
	a.mu.Unlock()
	return nil
}

// SetInterruptMode records the interrupt mode: InterruptImmediate or
// InterruptWait (see their doc: both behave alike in agentsh).
func (a *AgentSession) SetInterruptMode(mode string) error {
	if mode != InterruptImmediate && mode != InterruptWait {
		return fmt.Errorf("invalid interrupt mode %q (want %q or %q)", mode, InterruptImmediate, InterruptWait)
	}
	a.mu.Lock()
	a.q.interrupt = mode
	a.mu.Unlock()
	return nil
}

func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}

// SteeringMode is the steering queue's mode.
func (a *AgentSession) SteeringMode() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return orDefault(a.q.steerMode, QueueOneAtATime)
}

// FollowUpMode is the follow-up queue's mode.
func (a *AgentSession) FollowUpMode() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return orDefault(a.q.followMode, QueueOneAtATime)
}

// InterruptMode is the interrupt mode.
func (a *AgentSession) InterruptMode() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return orDefault(a.q.interrupt, InterruptImmediate)
}

// QueuedInput returns the texts of the queued steering messages and
// follow-ups, oldest first.
func (a *AgentSession) QueuedInput() (steering, followUp []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return texts(a.q.steering), texts(a.q.followUp)
}

// QueuedInputCount is how many steering messages and follow-ups wait.
func (a *AgentSession) QueuedInputCount() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.q.steering) + len(a.q.followUp)
}

// TakeQueuedInput empties both queues and returns what they held (the
// user took the messages back).
func (a *AgentSession) TakeQueuedInput() (steering, followUp []string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	steering, followUp = texts(a.q.steering), texts(a.q.followUp)
	a.q.steering, a.q.followUp = nil, nil
	return steering, followUp
}

func texts(ms []*session.UserMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// take removes the messages due from q: one, or all of them.
func take(q *[]*session.UserMessage, mode string) []session.Message {
	n := len(*q)
	if n == 0 {
		return nil
	}
	if mode != QueueAll {
		n = 1
	}
	out := make([]session.Message, n)
	for i, m := range (*q)[:n] {
		out[i] = m
	}
	*q = append([]*session.UserMessage(nil), (*q)[n:]...)
	return out
}

// dequeueSteering takes the steering messages due at this step.
func (a *AgentSession) dequeueSteering() []session.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return take(&a.q.steering, a.q.steerMode)
}

// dequeueFollowUp takes the follow-ups due when the agent would stop.
func (a *AgentSession) dequeueFollowUp() []session.Message {
	a.mu.Lock()
	defer a.mu.Unlock()
	return take(&a.q.followUp, a.q.followMode)
}

// Continue runs the agent on the queued input when no run is left to take
// it (a steer or follow-up sent while idle, or one that came just after a
// run's last look at the queues): the steering messages due, else the
// follow-ups due, join the conversation and the model is called, as
// Prompt does. With nothing queued it does nothing.
func (a *AgentSession) Continue(ctx context.Context, p llm.Provider, model string, reg *tools.Registry, emit func(Event)) error {
	first := a.dequeueSteering()
	if len(first) == 0 {
		first = a.dequeueFollowUp()
	}
	if len(first) == 0 {
		return nil
	}
	return a.runAgent(ctx, nil, first, p, model, reg, emit)
}

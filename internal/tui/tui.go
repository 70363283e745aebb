// Package tui is agentsh's full-screen interface (Bubble Tea v2; spec §5,
// §7): the transcript of the conversation as a component of its own
// (transcript.go), where the user's `!` commands and the model's tool calls
// stream live; the multi-line editor with the slash menu and `@` file
// mentions; the status line (usage, the wait of a model call, jobs, the
// sandbox). Modal surfaces are layers on one stack that answer with action
// values (layers.go): the pager, the jobs panel and an attached job, the
// PTY overlay of a program that takes the screen, the quit question, the
// session and model pickers, the approval question and /permissions, the
// trust question of a project's settings (also run alone before the TUI).
// Every key comes from one map (keys.go), which also makes /help and the
// hints.
package tui

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/jobs"
	"agentsh/internal/session"
)

// Config is what the TUI runs on.
type Config struct {
	Session      *agent.AgentSession
	Executor     *bash.Executor // nil = bash.Default()
	Jobs         *jobs.Manager  // where the model's background commands run; nil = none
	ToolSettings bash.ToolSettings
	// Models is the process's current model and thinking level: /model
	// opens a picker of its available models or switches to a name,
	// keys.Main.ThinkingLevel cycles the level (modelpicker.go). nil: no
	// model; bang commands still work.
	Models *agent.Models
	// ModelLabel and ModelError are the model asked for ("provider/model")
	// and why it could not be built, for the status line and the no-model
	// hint while Models has no model.
	ModelLabel string
	ModelError string
	NoColor    bool
	Notice     string // shown in the transcript at start, e.g. that --continue found nothing
	Prompt     string // sent once the TUI is up, as if typed and entered (agentsh "prompt")
	// Sandbox is the sandbox of the model's commands for the status line
	// ("sandbox: workspace-write", "YOLO"), warn when it is off or weaker
	// than asked; nil or "": nothing is shown.
	Sandbox func() (text string, warn bool)

	// NewSession makes the fresh session /new switches to (on the same
	// job manager); nil: /new is not available.
	NewSession func() (*agent.AgentSession, error)
	// ListSessions lists the saved sessions of the directory, newest
	// first, for /resume's picker; OpenSession opens the chosen one (on
	// the same executor and job manager), with a warning to show, if any
	// (corrupt lines skipped). Both do I/O: the TUI calls them in
	// commands, never in Update. Either nil: /resume is not available.
	ListSessions func() ([]session.Info, error)
	OpenSession  func(info session.Info) (sess *agent.AgentSession, warning string, err error)
	// LeftSession tells that the TUI is done with left (/new or /resume
	// replaced it, or a /resume could not go on with the session it
	// opened) and goes on with current. It is called from Update and must
	// not block: it ends left's shells and closes its file in the
	// background, at once rather than at exit. nil: the caller ends every
	// session at exit.
	LeftSession func(left, current *agent.AgentSession)
	// Approvals decide on the model's commands that bash.patterns rules
	// or the sandbox stop; the TUI is their Approver (approval.go).
	Approvals agent.Approvals
	// Settings are the settings files the sessions follow: a change of
	// the project's that loosens something the folder is not trusted for
	// brings the trust question back (trust.go). nil: never asked here.
	Settings *config.LiveSettings

	// Input and Output default to the process's terminal; tests set them.
	Input  io.Reader
	Output io.Writer
}

// shutdownWait bounds how long quitting waits for the agent's run and the
// bang goroutines after cancelling them; their commands are killed by then,
// this only guards against a stuck provider.
const shutdownWait = 10 * time.Second

// Run shows the TUI until the user quits or ctx is cancelled. Whatever is
// still running then (agent stream, bang command, PTY program) is stopped
// before Run returns; the caller closes the executor's shells.
func Run(ctx context.Context, cfg Config) error {
	if cfg.Session == nil {
		return errors.New("tui: no session")
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

	var p *tea.Program
	ready := make(chan struct{})
	send := func(msg tea.Msg) {
		<-ready
		p.Send(msg)
	}
	m, err := newModel(ctx, cfg, send)
	if err != nil {
		return fmt.Errorf("tui: %w", err)
	}
	opts := []tea.ProgramOption{tea.WithContext(ctx)}
	if cfg.Input != nil {
		opts = append(opts, tea.WithInput(cfg.Input))
	}
	if cfg.Output != nil {
		opts = append(opts, tea.WithOutput(cfg.Output))
	}
	p = tea.NewProgram(m, opts...)
	close(ready)

	_, runErr := p.Run()

	// Whatever way the program ended, nothing may outlive it.
	m.pump.close()
	cancel()
	m.abortAll()
	m.host.killAll()
	done := make(chan struct{})
	go func() {
		m.runner.Wait()
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(shutdownWait):
	}
	if runErr != nil && errors.Is(runErr, tea.ErrProgramKilled) && parent.Err() != nil {
		return nil // cancelled from outside (a signal): a normal way to end
	}
	if errors.Is(runErr, tea.ErrInterrupted) {
		return nil // a SIGINT from outside (ctrl+c itself is a key): ends it as SIGTERM does
	}
	if runErr != nil {
		return fmt.Errorf("tui: %w", runErr)
	}
	return nil
}

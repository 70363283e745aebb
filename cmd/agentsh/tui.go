package main

// Interactive mode: `agentsh` in a terminal runs the full-screen TUI
// (internal/tui) on the same session, registry and provider setup as print
// mode, with a UI present so tool calls may take the PTY path.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/charmbracelet/x/term"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/confinedfs"
	"agentsh/internal/session"
	"agentsh/internal/tui"
)

// isTerminal reports whether f is a terminal (a character device such as
// /dev/null is not).
func isTerminal(f *os.File) bool { return term.IsTerminal(f.Fd()) }

// interactiveTerminal reports whether both ends are a terminal, the only
// case where a full-screen UI makes sense.
func interactiveTerminal() bool {
	return isTerminal(os.Stdin) && isTerminal(os.Stdout)
}

// runTUI runs the full-screen TUI; o.messages, if any, are sent as the
// first prompt. When the session has a message at the end, stdout gets the
// command that resumes it.
func runTUI(o printOptions, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "agentsh: %v\n", err)
		return 1
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	// A project file that loosens the user's settings: the trust question
	// comes first, before anything runs with them.
	trustNotice := ""
	ask := func(live *config.LiveSettings, p *config.ProjectTrust) error {
		trust, ok, err := tui.AskTrust(ctx, tui.TrustConfig{Project: p, NoColor: os.Getenv("NO_COLOR") != ""})
		switch {
		case err != nil:
			return err
		case !ok:
			return errLeftAtTrust
		case trust:
			if err := live.Trust(p); err != nil {
				return err
			}
			trustNotice = tui.TrustedNotice(p, true)
		default:
			trustNotice = config.UntrustedNotice(p)
		}
		return nil
	}
	// A settings file that does not load must not keep the user out: the
	// TUI starts on the defaults and says so (tui.Config.Settings), and
	// `!vim .agentsh/settings.json` can fix it.
	brokenNotice := ""
	cwd, live, toolSettings, spec, err := modeSetup(&o, ask, func(error) {
		if o.sandbox == (config.SandboxFlags{}) {
			brokenNotice = readOnlyNotice
		}
	})
	if errors.Is(err, errLeftAtTrust) {
		return 0 // left at the question: nothing was started
	}
	if err != nil {
		return fail(err)
	}
	// A broken model setting must not keep the user out: bang commands
	// work without one, and the TUI says what is wrong.
	modelErr := ""
	models, retry, err := newModels(o, spec, live)
	if err != nil {
		modelErr = err.Error()
		if models, retry, err = newModels(o, "", live); err != nil {
			return fail(err)
		}
	}
	// The rc snapshot is taken in the background: the first frame does not
	// wait for the user's rc files, only the first command might.
	defer bash.CloseAll()      // after the TUI: no shell of a bang command is left
	defer confinedfs.StopAll() // the file tools' helpers
	var warm sync.WaitGroup
	warm.Go(func() { warmSnapshot(toolSettings) })
	defer warm.Wait() // before CloseAll removes the snapshots

	pickNotice := ""
	if o.pick {
		// -r without an id: the user picks the session first.
		path, notice, err := pickSession(ctx, cwd)
		if err != nil {
			return fail(err)
		}
		if path == "" && notice == "" {
			return 0 // cancelled: nothing was opened
		}
		o.resume, pickNotice = path, notice
	}
	store, notice, err := openStore(o, cwd, stderr)
	if err != nil {
		return fail(err)
	}
	if notice == "" {
		notice = pickNotice
	}
	if trustNotice != "" {
		notice = strings.TrimSpace(trustNotice + " " + notice)
	}
	if brokenNotice != "" {
		notice = strings.TrimSpace(brokenNotice + " " + notice)
	}
	jm := newJobs(toolSettings)
	defer jm.Close() // quitting stops every job (their guardians would anyway)
	// Until the TUI is up, what goes wrong on the side is said on stderr;
	// then it has no stderr, and a session /new makes goes on without.
	var tuiUp atomic.Bool
	sessions := newSessions(o, cwd, live, toolSettings, jm, models, retry, true, func() bool { return !tuiUp.Load() }, stderr)
	defer sessions.Close()
	first, attachErr, err := sessions.First(store, restoreOf(o))
	if err != nil {
		return fail(err)
	}
	if attachErr != nil {
		notice = strings.TrimSpace(notice + " " + attachErr.Error())
	}
	tuiUp.Store(true)
	cfg := tui.Config{
		Session: first, Executor: bash.Default(), ToolSettings: toolSettings, Jobs: jm,
		ModelLabel: spec, ModelError: modelErr,
		NoColor: os.Getenv("NO_COLOR") != "",
		Sandbox: sandboxStatusLine(o.sb),
		Notice:  notice, Prompt: strings.Join(o.messages, " "),
		NewSession: sessions.New, LeftSession: sessions.Leave, Models: models, Settings: live,
	}
	if !o.noSession { // --no-session saves nothing and so resumes nothing either
		cfg.ListSessions = sessions.List
		cfg.OpenSession = func(info session.Info) (*agent.AgentSession, string, error) {
			sess, skipped, err := sessions.Open(info.Path)
			if err != nil || len(skipped) == 0 {
				return sess, "", err
			}
			return sess, fmt.Sprintf("Skipped %d corrupt line(s) of the session: %v", len(skipped), skipped[0]), nil
		}
	}
	err = tui.Run(ctx, cfg)
	printResumeHint(stdout, sessions.Current())
	if err != nil {
		return fail(err)
	}
	return 0
}

// readOnlyNotice follows the warning of a settings file that does not load
// at start (tui.Config.Settings): the sandbox the file sets is unknown.
const readOnlyNotice = "The model's sandbox is read-only until agentsh restarts on settings that load (--sandbox or --yolo chooses another)."

// errLeftAtTrust: the user left agentsh at the trust question (ctrl+c).
var errLeftAtTrust = errors.New("left at the trust question")

// printResumeHint tells, after the TUI, how to come back to a saved session
// that has a message (an empty one left no file to resume).
func printResumeHint(w io.Writer, agent *agent.AgentSession) {
	if agent.Store() == nil || len(agent.Messages()) == 0 {
		return
	}
	fmt.Fprintf(w, "Session %s saved. Resume it with: agentsh -r %s\n", agent.ID(), agent.ID())
}

// pickSession runs the session picker for -r without an id: the chosen
// session's path, or "" with a notice when cwd has no session to resume, or
// "" and "" when the user cancelled.
func pickSession(ctx context.Context, cwd string) (path, notice string, err error) {
	list, err := session.List(cwd)
	if err != nil {
		return "", "", err
	}
	if len(list) == 0 {
		return "", "No session to resume in " + cwd + ": starting a new one.", nil
	}
	info, ok, err := tui.PickSession(ctx, tui.PickerConfig{Cwd: cwd, Sessions: list, NoColor: os.Getenv("NO_COLOR") != ""})
	if err != nil || !ok {
		return "", "", err
	}
	return info.Path, "", nil
}

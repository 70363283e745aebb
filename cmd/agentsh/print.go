package main

// Print mode (spec §7, as the reference agent's): `agentsh -p "prompt"` runs one agent
// prompt non-interactively and prints the final answer (text) or every
// event as a JSON line (json). The mode dispatch also owns `--mode rpc`.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	"agentsh/internal/confinedfs"
	"agentsh/internal/jobs"
	"agentsh/internal/llm"
	"agentsh/internal/rpc"
	sbx "agentsh/internal/sandbox"
	"agentsh/internal/session"
	"agentsh/internal/sink"
)

// Output modes of --mode.
const (
	modeText = "text"
	modeJSON = "json"
	modeRPC  = "rpc"
)

// noModelMessage is printed when a prompt needs a model and none is
// configured.
const noModelMessage = `agentsh: no model configured. Configure one with any of:
  --model provider/model            e.g. --model openai/gpt-4.1 or --model anthropic/claude-sonnet-4-5
  "model": "provider/model"         in ~/.config/agentsh/settings.json or .agentsh/settings.json
  AGENTSH_MODEL=provider/model      in the environment
Providers: %s. Credentials come from the environment:
  OPENAI_API_KEY (and OPENAI_BASE_URL for another OpenAI-compatible server), ANTHROPIC_API_KEY
`

// printOptions are the parsed flags of the modes.
type printOptions struct {
	print     bool   // -p / --print
	mode      string // "" (not given), text, json, rpc
	model     string // --model
	thinking  string // --thinking LEVEL
	cont      bool   // --continue / -c
	resume    string // --resume / -r
	pick      bool   // -r without an id: the session picker (TUI only)
	noSession bool   // --no-session
	allowAsk  bool   // --allow-ask: bash.patterns ask rules run without asking where no one can answer
	// trustProject applies what the project's settings loosen, as they
	// are at start, for this run (--trust-project).
	trustProject bool
	help         bool // -h / --help
	messages     []string

	sandbox config.SandboxFlags // --sandbox MODE, --yolo
	// sb is the sandbox of the model's commands: the settings as read at
	// start under the flags (modeSetup).
	sb config.SandboxSettings
}

// parseModeArgs parses the mode flags; flags and messages may be mixed, and
// "--" ends the flags.
func parseModeArgs(args []string) (printOptions, error) {
	var o printOptions
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			o.messages = append(o.messages, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			o.messages = append(o.messages, a)
			continue
		}
		name, val, hasVal := strings.Cut(a, "=")
		value := func() (string, error) {
			if hasVal {
				return val, nil
			}
			if i+1 >= len(args) {
				return "", fmt.Errorf("flag %s needs a value", name)
			}
			i++
			return args[i], nil
		}
		noValue := func() error {
			if hasVal {
				return fmt.Errorf("flag %s takes no value", name)
			}
			return nil
		}
		var err error
		switch name {
		case "-p", "--print":
			o.print = true
			err = noValue()
		case "-c", "--continue":
			o.cont = true
			err = noValue()
		case "--no-session":
			o.noSession = true
			err = noValue()
		case "-h", "--help":
			o.help = true
		case "--allow-ask":
			o.allowAsk = true
			err = noValue()
		case "--trust-project":
			o.trustProject = true
			err = noValue()
		case "--mode":
			o.mode, err = value()
			if err == nil && o.mode != modeText && o.mode != modeJSON && o.mode != modeRPC {
				err = fmt.Errorf("--mode must be text, json or rpc, got %q", o.mode)
			}
		case "--model":
			o.model, err = value()
		case "--thinking":
			if o.thinking, err = value(); err == nil && !config.ValidThinkingLevel(o.thinking) {
				err = config.ThinkingLevelError(o.thinking)
			}
		case "--sandbox":
			var v string
			if v, err = value(); err == nil {
				o.sandbox.Mode, err = parseSandboxFlag(v)
			}
		case "--yolo":
			o.sandbox.Yolo = true
			err = noValue()
		case "-r", "--resume":
			if !hasVal && (i+1 >= len(args) || strings.HasPrefix(args[i+1], "-")) {
				o.pick = true
				break
			}
			o.resume, err = value()
			if err == nil && strings.TrimSpace(o.resume) == "" {
				err = errors.New("--resume needs a session id or path")
			}
		default:
			err = fmt.Errorf("unknown flag %s", name)
		}
		if err != nil {
			return o, err
		}
	}
	if o.noSession && (o.cont || o.resume != "" || o.pick) {
		return o, errors.New("--no-session cannot be combined with --continue or --resume")
	}
	if o.cont && (o.resume != "" || o.pick) {
		return o, errors.New("--continue and --resume cannot be combined")
	}
	if o.sandbox.Yolo && o.sandbox.Mode != "" {
		return o, config.ErrYoloAndSandbox
	}
	return o, nil
}

// readPipedStdin reads stdin when it is not a terminal. ok reports whether
// it had any (non-blank) data; the text comes without its trailing newlines.
func readPipedStdin(f *os.File) (text string, ok bool, err error) {
	if f == nil {
		return "", false, nil
	}
	st, err := f.Stat()
	if err != nil || st.Mode()&os.ModeCharDevice != 0 {
		return "", false, nil
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return "", false, err
	}
	if strings.TrimSpace(string(data)) == "" {
		return "", false, nil
	}
	return strings.TrimRight(string(data), "\r\n"), true, nil
}

// runPrint is the mode dispatch. stdin is read only by the modes that take
// a prompt from it.
func runPrint(args []string, stdin func() (string, bool, error), stdout, stderr io.Writer) int {
	o, err := parseModeArgs(args)
	if err != nil {
		fmt.Fprintf(stderr, "agentsh: %v\n\n%s", err, usage)
		return 2
	}
	if o.help {
		fmt.Fprint(stdout, usage)
		return 0
	}
	mode := o.mode
	if mode == "" {
		mode = modeText
	}
	if o.mode == "" && !o.print && interactiveTerminal() {
		// `agentsh --model …` (or -c, -r, or a prompt) in a terminal: the
		// TUI with those options, the words sent as the first prompt.
		return runTUI(o, stdout, stderr)
	}
	if o.pick {
		fmt.Fprint(stderr, "agentsh: --resume needs a session id or path (without one it opens the session picker, in the TUI only)\n")
		return 2
	}
	switch mode {
	case modeRPC:
		// stdin is the command stream here: it is never read as a prompt.
		return rpcMode(o, os.Stdin, stdout, stderr)
	case modeText, modeJSON:
	}

	data, piped, err := stdin()
	if err != nil {
		fmt.Fprintf(stderr, "agentsh: reading stdin: %v\n", err)
		return 1
	}
	messages := append([]string(nil), o.messages...)
	if piped {
		if len(messages) == 0 {
			messages = []string{data}
		} else {
			messages[0] += "\n" + data
		}
	}
	if len(messages) == 0 {
		fmt.Fprint(stderr, "agentsh: no prompt: agentsh -p \"prompt\" (or pipe the prompt on stdin)\n")
		return 2
	}
	return printMode(o, mode, messages, stdout, stderr)
}

// resolveModel picks the model: --model, else settings "model", else
// AGENTSH_MODEL. "" means none is configured.
func resolveModel(flagModel string, settings *config.Settings) (string, error) {
	if m := strings.TrimSpace(flagModel); m != "" {
		return m, nil
	}
	if v, ok := settings.Lookup("model"); ok && v != nil {
		s, isStr := v.(string)
		if !isStr {
			return "", fmt.Errorf("settings: model: expected a string \"provider/model\", got %v", v)
		}
		if strings.TrimSpace(s) != "" {
			return strings.TrimSpace(s), nil
		}
	}
	return strings.TrimSpace(os.Getenv("AGENTSH_MODEL")), nil
}

// openStore creates, continues or resumes the session file; nil with
// --no-session. notice is for the user when --continue found nothing to
// continue (a new session is started instead).
func openStore(o printOptions, cwd string, stderr io.Writer) (store *session.Store, notice string, err error) {
	if o.noSession {
		return nil, "", nil
	}
	path := ""
	switch {
	case o.cont:
		p, err := session.Newest(cwd)
		if errors.Is(err, session.ErrNoSession) {
			notice = noContinueNotice(cwd)
		} else if err != nil {
			return nil, "", err
		}
		path = p
	case o.resume != "":
		p, err := session.Find(cwd, o.resume)
		if err != nil {
			return nil, "", err
		}
		path = p
	}
	if path == "" {
		store, err = session.Create(cwd)
		return store, notice, err
	}
	store, loadErrs, err := session.Open(path)
	if err != nil {
		return nil, "", err
	}
	for _, le := range loadErrs {
		fmt.Fprintf(stderr, "agentsh: skipped a corrupt line of the session: %v\n", le)
	}
	return store, "", nil
}

// noContinueNotice is what --continue says when cwd has no session with a
// message.
func noContinueNotice(cwd string) string {
	return "No session to continue in " + cwd + ": starting a new one."
}

// modeSetup is what the TUI, print and RPC mode read before they start: the
// cwd, the settings files (followed from now on), the bash tool's settings
// as they are at start (the rc snapshot is left to warmSnapshot), the model
// spec ("" = none configured) and, into o.sb, the sandbox.
//
// A project settings file that loosens the user's own and whose folder is
// not trusted for it is asked about with ask (the TUI; it trusts the folder
// or not), applied for this run with --trust-project, or else refused
// (session.UntrustedError): print, json and RPC have no one to ask.
//
// A settings file that does not load is told to broken, and the mode goes
// on with the defaults until it is fixed (live follows it), but for the
// model's sandbox: read-only for the run, unless the flags choose. With
// broken nil it is the error: print and json do not start on it.
func modeSetup(o *printOptions, ask func(*config.LiveSettings, *config.ProjectTrust) error, broken func(error)) (cwd string, live *config.LiveSettings, ts bash.ToolSettings, spec string, err error) {
	if cwd, err = os.Getwd(); err != nil {
		return "", nil, ts, "", err
	}
	live, settingsErr := config.WatchSettings(cwd)
	if settingsErr != nil {
		if broken == nil {
			return "", nil, ts, "", settingsErr
		}
		broken(settingsErr)
	}
	settings, _ := live.Current()
	if p := settings.Project; p != nil && !p.Trusted {
		switch {
		case o.trustProject:
			settings, err = live.TrustForRun()
		case ask != nil:
			if err = ask(live, p); err == nil {
				settings, err = live.Current()
			}
		default:
			err = &config.UntrustedError{Project: p}
		}
		if err != nil {
			return "", nil, ts, "", err
		}
	}
	sb := settings.Sandbox
	if settingsErr != nil {
		// The files' sandbox is unknown and is read only at start: the
		// model's is the strictest until a restart, unless the flags say.
		sb.Mode = sbx.ReadOnly
	}
	o.sb = sb.With(o.sandbox)
	if spec, err = resolveModel(o.model, settings); err != nil {
		return "", nil, ts, "", err
	}
	if ts, err = live.ToolSettings(); err != nil && (settingsErr == nil || ts.Shell.Path == "") {
		return "", nil, ts, "", err
	}
	return cwd, live, ts, spec, nil
}

// brokenAtStart follows the error of a settings file that does not load
// when RPC mode starts.
const brokenAtStart = "starting on the default settings until the file is fixed: bash commands run with them " +
	"(their responses carry settingsError), the model's commands are refused, and the model's sandbox is read-only " +
	"until a restart (unless --sandbox or --yolo chooses)"

// untrustedChange says on stderr that a change of the project's settings
// during the run loosens what the folder is not trusted for, and is
// ignored (the modes without a UI).
func untrustedChange(stderr io.Writer) func(*config.ProjectTrust) {
	var mu sync.Mutex
	return func(p *config.ProjectTrust) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(stderr, "agentsh: %s\n", config.UntrustedChangeNotice(p))
	}
}

// warmSnapshot takes the rc snapshot of ts's shell (cached per shell and
// env), so that the first command does not wait for it.
func warmSnapshot(ts bash.ToolSettings) { bash.GetOrCreateSnapshot(ts.Shell.Path, ts.Shell.Env) }

func printMode(o printOptions, mode string, messages []string, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "agentsh: %v\n", err)
		return 1
	}
	cwd, live, toolSettings, spec, err := modeSetup(&o, nil, nil)
	if err != nil {
		return fail(err)
	}
	live.OnUntrusted(untrustedChange(stderr))
	if spec == "" {
		fmt.Fprintf(stderr, noModelMessage, strings.Join(llm.Providers, ", "))
		return 1
	}
	models, retry, err := newModels(o, spec, live)
	if err != nil {
		return fail(err)
	}
	provider, model := models.Provider()
	defer bash.CloseAll()
	defer confinedfs.StopAll() // the file tools' helpers
	// The rc snapshot is taken beside the session's set-up and the first
	// request, which never wait for it; the model's shell is started with
	// that request (tools.Registry.Prestart).
	var warm sync.WaitGroup
	warm.Go(func() { warmSnapshot(toolSettings) })
	defer warm.Wait() // before CloseAll removes the snapshots
	warnSandbox(o.sb, stderr, false)

	_, sess, jm, closeAll, err := headlessSessions(o, cwd, live, toolSettings, models, retry, true, stderr)
	if err != nil {
		return fail(err)
	}
	defer closeAll()
	executor := bash.Default()
	// Print mode has no UI: never a PTY.
	reg, err := agent.NewTools(agent.ToolsConfig{Current: func() *agent.AgentSession { return sess },
		Executor: executor, Jobs: jm, Settings: toolSettings, Approvals: agent.Approvals{AllowAsk: o.allowAsk}})
	if err != nil {
		return fail(err)
	}

	ctx, stop := signalContext()
	defer stop()
	// A failed write of an event (the reader closed stdout) ends the run
	// like a signal does.
	ctx, stopOutput := context.WithCancel(ctx)
	defer stopOutput()

	var emit func(agent.Event)
	var writeErr error
	if mode == modeJSON {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		header := session.Header{Type: "session", Version: session.SessionVersion, ID: sess.ID(),
			Timestamp: time.Now().UTC().Format("2006-01-02T15:04:05.000Z"), Cwd: cwd}
		if st := sess.Store(); st != nil {
			header = st.Header()
		}
		if err := enc.Encode(header); err != nil {
			return fail(err)
		}
		emit = func(e agent.Event) {
			if writeErr == nil {
				b, err := e.Printable().MarshalJSON()
				if err == nil {
					_, err = stdout.Write(append(b, '\n'))
				}
				if writeErr = err; writeErr != nil {
					stopOutput()
				}
			}
		}
	}

	// The messages run one after another on the Runner the TUI and RPC use.
	runner := agent.NewRunner(ctx)
	for _, msg := range messages {
		var err error
		run, startErr := runner.Start(func(ctx context.Context) error {
			err = sess.Prompt(ctx, msg, provider, model, reg, emit)
			return err
		}, nil)
		if startErr != nil {
			return fail(startErr)
		}
		run.Wait()
		run.End()
		if writeErr != nil {
			return fail(writeErr)
		}
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "agentsh: Request aborted")
			return 1
		}
		if err != nil {
			return fail(err)
		}
	}
	if writeErr != nil {
		return fail(writeErr)
	}
	if mode == modeText {
		if text, ok := finalText(sess.Messages()); ok {
			if _, err := io.WriteString(stdout, answerText(stdout, text)+"\n"); err != nil {
				return 1
			}
		}
	}
	return 0
}

// answerText is the model's answer as -p prints it to w: on a terminal,
// sanitized as the TUI shows it (no escape sequence of the model's may set
// the clipboard, retitle the window or move the cursor); into a pipe or a
// file, as the model wrote it.
func answerText(w io.Writer, text string) string {
	if f, ok := w.(*os.File); ok && isTerminal(f) {
		return sink.Sanitize(text)
	}
	return text
}

// finalText is the text of the last assistant message.
func finalText(ms []session.Message) (string, bool) {
	for i := len(ms) - 1; i >= 0; i-- {
		if am, ok := ms[i].(*session.AssistantMessage); ok {
			return am.Text, am.Text != ""
		}
	}
	return "", false
}

// rpcMode serves newline-delimited JSON commands (docs/rpc.md). Without a
// model, prompts fail with a clear error while bash commands still work.
func rpcMode(o printOptions, in io.Reader, stdout, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "agentsh: %v\n", err)
		return 1
	}
	// A broken settings file does not keep the client out: its `bash`
	// (the user's command) runs on the defaults with settingsError, so it
	// can fix the file; the model's commands are refused until then.
	cwd, live, toolSettings, spec, err := modeSetup(&o, nil, func(err error) {
		fmt.Fprintf(stderr, "agentsh: %v\nagentsh: %s\n", err, brokenAtStart)
	})
	if err != nil {
		return fail(err)
	}
	live.OnUntrusted(untrustedChange(stderr))
	models, retry, err := newModels(o, spec, live)
	if err != nil {
		return fail(err)
	}
	defer bash.CloseAll()      // stdin EOF: no shell and no process of a run is left
	defer confinedfs.StopAll() // the file tools' helpers
	// The rc snapshot is taken while the client has not asked anything
	// yet: the first response never waits for the user's rc files.
	var warm sync.WaitGroup
	warm.Go(func() { warmSnapshot(toolSettings) })
	defer warm.Wait() // before CloseAll removes the snapshots
	warnSandbox(o.sb, stderr, false)

	sessions, first, jm, closeAll, err := headlessSessions(o, cwd, live, toolSettings, models, retry, restoreOf(o), stderr)
	if err != nil {
		return fail(err)
	}
	defer closeAll()
	executor := bash.Default()
	// new_session swaps the session: every call asks for the current one.
	// RPC has no UI: never a PTY.
	reg, err := agent.NewTools(agent.ToolsConfig{Current: sessions.Current, Executor: executor, Jobs: jm, Settings: toolSettings,
		Approvals: agent.Approvals{AllowAsk: o.allowAsk}})
	if err != nil {
		return fail(err)
	}
	ctx, stop := signalContext()
	defer stop()
	// stdout closed by the client: Serve returns the write error after the
	// same shutdown as on stdin EOF, and agentsh exits 1 (docs/rpc.md).
	err = rpc.Serve(ctx, in, stdout, rpc.Config{Session: first, NewSession: sessions.New, OpenSession: sessions.OpenTelling, Models: models, Retry: retry, Tools: reg, Jobs: jm})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fail(err)
	}
	return 0
}

// headlessSessions is print and RPC mode's start: the conversation the
// flags choose (--continue, --resume, --no-session) as the first of the
// mode's Sessions, with its job manager; what goes wrong on the side is said
// on stderr. restoreLater is whether a conversation opened later continues
// with its own model. closeAll stops the jobs, then closes the sessions (the
// jobs may write full outputs until they stop).
func headlessSessions(o printOptions, cwd string, live *config.LiveSettings, ts bash.ToolSettings, models *agent.Models,
	retry *agent.Retry, restoreLater bool, stderr io.Writer) (*agent.Sessions, *agent.AgentSession, *jobs.Manager, func(), error) {
	store, notice, err := openStore(o, cwd, stderr)
	if notice != "" {
		fmt.Fprintf(stderr, "agentsh: %s\n", notice)
	}
	if err != nil {
		return nil, nil, nil, nil, err
	}
	jm := newJobs(ts)
	sessions := newSessions(o, cwd, live, ts, jm, models, retry, restoreLater, nil, stderr)
	closeAll := func() {
		stopJobs(jm, stderr) // every job dies with the session
		sessions.Close()
	}
	first, modelErr, err := sessions.First(store, restoreOf(o))
	if err != nil {
		closeAll()
		return nil, nil, nil, nil, err
	}
	if modelErr != nil {
		fmt.Fprintf(stderr, "agentsh: %v\n", modelErr)
	}
	return sessions, first, jm, closeAll, nil
}

// newJobs is a mode's job manager, holding bash.maxJobs jobs at once as the
// settings said at start.
func newJobs(ts bash.ToolSettings) *jobs.Manager {
	m := jobs.NewManager()
	if ts.MaxJobs > 0 {
		m.MaxJobs = ts.MaxJobs
	}
	return m
}

// stopJobs ends every job still running when a mode exits, saying so on
// stderr (spec §9: every job dies with the session).
func stopJobs(m *jobs.Manager, stderr io.Writer) {
	if n := m.Running(); n > 0 {
		fmt.Fprintf(stderr, "agentsh: stopping %d running job(s) at exit\n", n)
	}
	m.Close()
}

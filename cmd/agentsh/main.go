// Command agentsh is a terminal coding-agent shell: the full-screen TUI
// when started in a terminal, print mode (`-p`), RPC mode, and the bash
// runtime's `exec` and `artifact`.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/config"
	sbx "agentsh/internal/sandbox"
	"agentsh/internal/session"
	"agentsh/internal/tools"
)

const usage = `agentsh — a terminal coding-agent shell

Usage:
  agentsh [--model PROVIDER/MODEL] [-c | -r [ID|PATH] | --no-session]
          [--sandbox MODE | --yolo] [--trust-project] ["PROMPT"...]
      In a terminal: the full-screen TUI, sending PROMPT first if given.
      When .agentsh/settings.json loosens your own settings (yolo, sandbox
      keys, allow rules, shell.path/prefix/env/scrubEnv), it first asks
      whether you trust this folder.
      Enter sends, shift+enter adds a line, !cmd runs cmd in the shell
      (!!cmd keeps it from the model), esc cancels, ctrl+o expands output,
      ctrl+c twice or ctrl+d quits. -c continues the newest session of
      this directory that has a message, -r ID resumes one (its transcript
      is shown again), -r alone lists them to pick one (as /resume does
      in the TUI). On exit it prints the command that resumes the session.
      A session is saved from its first message on.
  agentsh -p [flags] "PROMPT"...
      Run PROMPT through the agent and print its final answer (piped stdin is
      appended to the prompt after a newline; with stdin piped, -p is implied).
      Flags:
        -p, --print           print mode
        --mode text|json      text: the final answer; json: the session header,
                              then every event, one JSON object per line
        --model PROVIDER/MODEL  else settings "model", else $AGENTSH_MODEL
                              (providers: openai, anthropic, ollama, openrouter;
                              keys: OPENAI_API_KEY, OPENAI_BASE_URL, ANTHROPIC_API_KEY)
        --thinking LEVEL      off, minimal, low, medium, high or xhigh (else
                              settings "defaultThinkingLevel", else off)
        -c, --continue        continue the newest session of this directory
                              (none: says so on stderr and starts a new one)
        -r, --resume ID|PATH  resume a given session
        --no-session          keep the session in memory only (full outputs
                              in a temporary folder removed at exit)
        --sandbox MODE        the model's commands run in MODE: workspace-write
                              (default: write only in this directory and the
                              temp directory, no network), read-only or off;
                              beats settings "sandbox.mode" (also in the TUI
                              and RPC mode)
        --yolo                no sandbox and no asking (status line: YOLO)
        --allow-ask           run the commands of bash.patterns "ask" rules
                              without asking (else refused: no one to ask;
                              also in --mode rpc)
        --trust-project       apply what .agentsh/settings.json loosens, as it
                              is at start, for this run (else such a file is
                              refused here: no one is asked; also in the TUI,
                              --mode rpc and exec)
      Exit status: 0, or 1 on an error or an abort (message on stderr).
  agentsh exec [--cwd DIR] [--timeout SECONDS] [--head N] [--tail N] [--json]
               [--sandbox MODE | --yolo] [--trust-project] [--allow-ask] -- COMMAND
      Run COMMAND exactly as the model's bash tool would, in its sandbox, and
      print what the model would receive. bash.patterns hold: a "deny" rule
      refuses it, an "ask" rule too unless --allow-ask (no one to ask). DIR (default: here) is where it
      runs, whose .agentsh/settings.json applies, and the sandbox's writable
      root. COMMAND is one shell string;
      several words are joined with spaces, as ssh does. A one-line warning
      on stderr says when the sandbox is off or weaker on this system. Exit
      status: the command's, or 1 without one; 2 for a usage error.
  agentsh artifact [--session ID|PATH] N
      Print artifact N (the full output behind artifact://N): of the given
      session, else of the session (or agentsh exec) of this directory that
      kept one last.
  agentsh --version
      Print the version.
`

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "exec":
			return runExec(args[1:], stdout, stderr)
		case "artifact":
			return runArtifact(args[1:], stdout, stderr)
		case "-h", "--help", "help":
			fmt.Fprint(stdout, usage)
			return 0
		case "--version":
			fmt.Fprintln(stdout, "agentsh "+version())
			return 0
		}
	}
	if len(args) == 0 || !strings.HasPrefix(args[0], "-") {
		// No flags first: in a terminal the TUI, with any words as the
		// first prompt (flags may follow them). Elsewhere piped stdin
		// switches to print mode (text), with the words as the prompt;
		// no arguments print the usage (not an error), and a word without
		// stdin is a typo.
		if interactiveTerminal() {
			return runPrint(args, func() (string, bool, error) { return "", false, nil }, stdout, stderr)
		}
		data, piped, err := readPipedStdin(os.Stdin)
		if err != nil {
			fmt.Fprintf(stderr, "agentsh: reading stdin: %v\n", err)
			return 1
		}
		if !piped {
			if len(args) == 0 {
				fmt.Fprint(stdout, usage)
				return 0
			}
			fmt.Fprintf(stderr, "agentsh: unknown command %q (a prompt opens the TUI in a terminal; agentsh -p %q prints the answer)\n\n%s",
				args[0], args[0], usage)
			return 2
		}
		return runPrint(args, func() (string, bool, error) { return data, true, nil }, stdout, stderr)
	}
	return runPrint(args, func() (string, bool, error) { return readPipedStdin(os.Stdin) }, stdout, stderr)
}

// optionalFloat is a flag that remembers whether it was set.
type optionalFloat struct{ v *float64 }

func (o *optionalFloat) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.FormatFloat(*o.v, 'f', -1, 64)
}

func (o *optionalFloat) Set(s string) error {
	f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil {
		return fmt.Errorf("expected a number of seconds, got %q", s)
	}
	o.v = &f
	return nil
}

// optionalInt is an int flag that remembers whether it was set.
type optionalInt struct{ v *int }

func (o *optionalInt) String() string {
	if o.v == nil {
		return ""
	}
	return strconv.Itoa(*o.v)
}

func (o *optionalInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return fmt.Errorf("expected a whole number of lines, got %q", s)
	}
	o.v = &n
	return nil
}

func runExec(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("exec", flag.ContinueOnError)
	fs.SetOutput(stderr)
	cwdFlag := fs.String("cwd", "", "working directory of the command, and the sandbox's writable root (default: the current directory)")
	trustProject := fs.Bool("trust-project", false, "apply what DIR's .agentsh/settings.json loosens, for this run")
	var timeout optionalFloat
	var head, tail optionalInt
	fs.Var(&timeout, "timeout", "timeout in seconds (default 300, clamped to 1-3600)")
	fs.Var(&head, "head", "keep only the first N lines")
	fs.Var(&tail, "tail", "keep only the last N lines")
	asJSON := fs.Bool("json", false, "print the structured result as JSON")
	sandboxFlag := fs.String("sandbox", "", "sandbox mode: workspace-write, read-only or off (default: settings sandbox.mode)")
	yolo := fs.Bool("yolo", false, "no sandbox (as --sandbox off)")
	allowAsk := fs.Bool("allow-ask", false, "run a command a bash.patterns ask rule covers (no one can be asked here)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	flags := config.SandboxFlags{Yolo: *yolo}
	if *sandboxFlag != "" {
		m, err := parseSandboxFlag(*sandboxFlag)
		if err != nil {
			fmt.Fprintf(stderr, "agentsh exec: %v\n", err)
			return 2
		}
		flags.Mode = m
	}
	if flags.Yolo && flags.Mode != "" {
		fmt.Fprintf(stderr, "agentsh exec: %v\n", config.ErrYoloAndSandbox)
		return 2
	}
	command := strings.Join(fs.Args(), " ")
	if fs.NArg() == 0 {
		fmt.Fprint(stderr, "agentsh exec: missing COMMAND (agentsh exec [flags] -- COMMAND)\n")
		return 2
	}

	// The command's directory (--cwd, else this one) is the session's:
	// its project settings and the sandbox's writable root,
	// never the caller's directory when --cwd names another. The artifact
	// folder stays the caller's, where `agentsh artifact` looks.
	caller, err := os.Getwd()
	if err != nil {
		fmt.Fprintf(stderr, "agentsh: %v\n", err)
		return 1
	}
	wd := caller
	if *cwdFlag != "" {
		wd = *cwdFlag
		if !filepath.IsAbs(wd) {
			wd = filepath.Join(caller, wd)
		}
		wd = filepath.Clean(wd) // a missing one is the tool's error
	}
	project := config.ProjectSettingsPath(wd)
	if st, err := os.Stat(wd); err != nil || !st.IsDir() {
		project = "" // no such directory: the tool says so
	}
	settings, err := config.LoadSettingsTrusting(config.GlobalSettingsPath(), project, *trustProject)
	if err != nil {
		fmt.Fprintf(stderr, "agentsh: %v\n", err)
		return 1
	}
	if p := settings.Project; p != nil && !p.Trusted {
		fmt.Fprintf(stderr, "agentsh: %v\n", &config.UntrustedError{Project: p})
		return 1
	}
	// The sandbox's namespace probe (a process of its own) runs beside the
	// rc snapshot, not after it.
	var probe sync.WaitGroup
	defer probe.Wait()
	if settings.Sandbox.With(flags).Effective() != sbx.Off {
		probe.Go(func() { sbx.Detect() })
	}
	toolSettings, err := bashToolSettings(settings)
	if err != nil {
		fmt.Fprintf(stderr, "agentsh: %v\n", err)
		return 1
	}
	defer bash.CloseAll()

	ctx, stop := signalContext()
	defer stop()

	arts := session.NewArtifactManager(session.ExecArtifactsDir(caller))
	// The model's sandbox, as the settings and the flags say.
	sb := settings.Sandbox.With(flags)
	warnSandbox(sb, stderr, flags.Mode != "")
	toolSettings.Shell.Sandbox = sb.Policy(wd, arts.Dir())
	// The same tools an agent has, so the interceptor blocks exactly what
	// it would block for a model's call.
	reg, err := tools.Standard(tools.NewBash(&bash.Tool{}, nil),
		tools.Env{Cwd: func() string { return wd }, ResolveArtifact: arts.Resolve})
	if err != nil {
		fmt.Fprintf(stderr, "agentsh: %v\n", err)
		return 1
	}
	tc := bash.ToolContext{
		Cwd:       wd,
		ToolNames: reg.Names(),
		Artifacts: arts,
		Settings:  toolSettings,
	}
	params := bash.ToolParams{Command: command, Timeout: timeout.v, Cwd: wd, Head: head.v, Tail: tail.v}
	// The model's path: bash.patterns' deny and ask rules hold here too.
	var final bash.FinalResult
	if refused := agent.RefuseUnattended(command, toolSettings.Patterns, *allowAsk); refused != nil {
		final = bash.Finalize(nil, refused)
	} else {
		res, err := (&bash.Tool{}).Execute(ctx, params, tc, nil)
		final = bash.Finalize(res, err)
	}

	code := 0
	if final.IsError {
		code = 1
		if final.Details.ExitCode != nil && *final.Details.ExitCode != 0 {
			code = *final.Details.ExitCode
		}
	}
	if *asJSON {
		out := struct {
			Content  []map[string]string `json:"content"`
			IsError  bool                `json:"isError"`
			Details  bash.ToolDetails    `json:"details"`
			ExitCode *int                `json:"exitCode"`
		}{
			Content:  []map[string]string{{"type": "text", "text": final.Content}},
			IsError:  final.IsError,
			Details:  final.Details,
			ExitCode: final.Details.ExitCode,
		}
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "agentsh: %v\n", err)
			return 1
		}
		return code
	}
	text := final.Content
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	if _, err := io.WriteString(stdout, text); err != nil {
		return 1
	}
	return code
}

// signalContext is cancelled by SIGINT, SIGTERM and SIGHUP (a closed
// terminal or a stopped service): every mode then cancels its runs, ends
// their processes, removes its folders and exits. SIGPIPE is caught as well,
// so that a write to a closed stdout fails with EPIPE, which the modes treat
// like the end of their input, instead of killing agentsh before it can clean
// up. (Caught, not ignored: an ignored SIGPIPE would be inherited by every
// command the shells run.)
func signalContext() (context.Context, context.CancelFunc) {
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	return signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
}

// bashToolSettings turns the loaded settings into the bash tool's settings
// with the rc snapshot taken now.
func bashToolSettings(settings *config.Settings) (bash.ToolSettings, error) {
	ts, err := settings.ToolSettings()
	if err == nil {
		ts.Shell.SnapshotPath = bash.GetOrCreateSnapshot(ts.Shell.Path, ts.Shell.Env)
		ts.Shell.LazySnapshot = false
	}
	return ts, err
}

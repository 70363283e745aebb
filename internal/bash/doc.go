// Package bash is agentsh's bash runtime: the model's bash tool and the
// engine that runs every shell command of a session, the user's `!`
// commands included. Comments cite its contract as "spec §N", a section of
// docs/spec.md.
//
// The tool (Tool.Execute, Finalize; spec §1) takes a call's arguments
// through the pipeline: a trailing `| head`/`| tail` taken off with a real
// shell parser (normalize.go, headtail.go; headstop.go closes the output of
// the final pipeline at the head count), the interceptor (interceptor.go),
// `artifact://N` in the command (artifacturl.go), cwd and timeout, then the
// engine or, with a UI and bash.virtualTerminal on, a pseudo-terminal
// (internal/pty), and shapes the result and its truncation notice for the
// model.
//
// The engine (Executor.Run; spec §2) keeps long-lived bash processes per
// session and runs each command on one of them over a protocol no command
// can forge or break (shell.go; docs/decisions/0001 and 0005). It keeps
// the session's state, the user's layer and the model's (state.go,
// statechange.go) and sources the user's rc snapshot (snapshot.go). A
// foreground command's stdin is a terminal the engine holds, and one that
// waits for input or outlasts bash.autoBackgroundSeconds becomes a job on
// the shell it runs in (detach.go; spec §9); `background: true` starts a
// job at once (jobs.go), and jobs and PTY commands start from the same
// snapshot and state (ptystart.go). The user's `!` commands can run with
// their output on the shell's terminal (terminal.go), so full-screen
// programs work. The model's shells run in the sandbox (sandbox.go; spec
// §10); CloseSession ends a session's shells when a UI leaves it.
//
// The bash.patterns matcher (patterns.go, patterns_unwrap.go) finds the
// simple commands a line runs, through wrappers and nested code, for the
// approvals in front of the tool.
package bash

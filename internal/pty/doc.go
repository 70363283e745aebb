// Package pty runs programs on pseudo-terminals (spec §3): the model's
// commands on the PTY path and jobs (internal/jobs). A Session starts
// `<shell> <args>` (the caller's arguments, never a login shell) on a
// creack/pty master below a guardian, confined by GuardSandbox when the
// model's sandbox applies (sandbox.go), in the hardened environment of
// BuildEnv (env.go). It reads the output as fast as the program writes it,
// into an OutputSink (with artifact spill) and into the emulated Screen
// (charmbracelet/x/vt, with an exact skip-ahead on floods; screen.go),
// forwards the user's keys normalized for a legacy terminal (NormalizeInput,
// keys.go), tells when the program takes the screen or waits reading its
// terminal (takeover.go), and kills every process of the session on esc,
// timeout, abort or dispose (docs/decisions/0002-pty-runtime.md).
//
// Screen also serves internal/bash, whose `!` commands and detached jobs
// run on the persistent shell's own terminal. The package is headless:
// nothing here draws; the TUI reads Screen.
package pty

// Package pty runs a tool call's command in a pseudo-terminal (spec §3): it
// starts `<shell> -c <command>` (or the caller's arguments, never a
// login shell) on a creack/pty master, reads the program's
// output as fast as it is written into an OutputSink (with artifact spill)
// and into a virtual terminal (charmbracelet/x/vt) whose screen an overlay
// can draw, forwards the user's keys normalized for a legacy terminal, and
// kills every process of the session on esc, timeout, abort or dispose.
//
// The package is headless: nothing here draws; the TUI reads Screen.
package pty

package main

// The sandbox's surfaces: the --sandbox and --yolo flags, the
// status line's words and the one-line warnings. What the kernel confines
// is the enforcement's (internal/sandbox); these say the mode as
// configured and never more.

import (
	"fmt"
	"io"
	"strings"
	"sync"

	"agentsh/internal/config"
	sbx "agentsh/internal/sandbox"
)

// parseSandboxFlag reads --sandbox's value.
func parseSandboxFlag(v string) (sbx.Mode, error) {
	m, err := sbx.ParseMode(v)
	if err != nil {
		return "", fmt.Errorf("--sandbox: %w", err)
	}
	return m, nil
}

// sandboxStatus is the status line's sandbox: the words, and whether to
// show them as a warning (the sandbox is off, opened or cannot be had).
func sandboxStatus(sb config.SandboxSettings) (text string, warn bool) {
	text = sb.Describe()
	return text, sb.Yolo || sb.Effective() == sbx.Off || sb.Network || sbx.Unavailable() != "" ||
		strings.HasPrefix(text, "sandbox weaker")
}

// warnSandbox says on w, in one line, that the sandbox asked for cannot be
// had on this system: off (not Linux) always; weaker (what the kernel
// cannot enforce, e.g. unix sockets before Landlock ABI 9) only when
// detail is set, for `agentsh exec --sandbox MODE`, which exists to try
// the sandbox: every other start would repeat the same line, which the
// status line shows instead.
func warnSandbox(sb config.SandboxSettings, w io.Writer, detail bool) {
	if !detail && sbx.Unavailable() == "" {
		// Not asked for: Warning's namespace probe starts a process, which
		// the start of every mode must not wait for.
		return
	}
	if msg := sbx.Warning(sb.Effective(), sb.Network); msg != "" {
		fmt.Fprintf(w, "agentsh: %s\n", msg)
	}
}

// sandboxStatusLine is sandboxStatus for the TUI, which asks at every
// frame: the words are made again only when what the kernel offers changed
// (namespaces that failed after the probe), the one thing that moves.
func sandboxStatusLine(sb config.SandboxSettings) func() (string, bool) {
	var (
		mu       sync.Mutex
		made, ns bool
		text     string
		warn     bool
	)
	return func() (string, bool) {
		n := sbx.Detect().Namespaces
		mu.Lock()
		defer mu.Unlock()
		if !made || ns != n {
			text, warn = sandboxStatus(sb)
			made, ns = true, n
		}
		return text, warn
	}
}

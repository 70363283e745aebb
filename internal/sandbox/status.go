package sandbox

import "strings"

// Describe is the sandbox's state in a few words, for the status line:
// "YOLO" when the user turned the sandbox and the asking off, "sandbox:
// off", else "sandbox: MODE" with what the user opened ("network on"), as
// "sandbox weaker: MODE" when the kernel cannot enforce all of it
// (Features.Weaknesses, which Warning spells out), or "sandbox: off" with
// the reason where this system cannot confine at all. It never claims
// more than the kernel gives.
func Describe(mode Mode, network, yolo bool) string {
	switch {
	case yolo:
		return "YOLO"
	case mode == Off || mode == "":
		return "sandbox: off"
	case Unavailable() != "":
		return "sandbox: off (" + Unavailable() + ")"
	}
	var b strings.Builder
	if len(Detect().Weaknesses(&Policy{Mode: mode, Network: network})) > 0 {
		b.WriteString("sandbox weaker: ")
	} else {
		b.WriteString("sandbox: ")
	}
	b.WriteString(string(mode))
	if network {
		b.WriteString(", network on")
	}
	return b.String()
}

// Warning is the one line `agentsh exec` prints on stderr when the mode
// asked for cannot be had in full on this system: off, or weaker with what
// is missing; "" when the kernel enforces all of it (or the user chose
// off).
func Warning(mode Mode, network bool) string {
	switch {
	case mode == Off || mode == "":
		return ""
	case Unavailable() != "":
		return "sandbox off: " + Unavailable() + "; the command runs unconfined"
	}
	if w := Detect().Weaknesses(&Policy{Mode: mode, Network: network}); len(w) > 0 {
		return "sandbox weaker: " + strings.Join(w, ", ")
	}
	return ""
}

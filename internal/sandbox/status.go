package sandbox

import "strings"

// Describe is the sandbox's state in a few words, for the status line and
// `agentsh exec`: "YOLO" when the user turned the sandbox and the asking
// off, else "sandbox: MODE" with what the user opened ("network on"), or
// "sandbox: off" with the reason when this system cannot confine at all.
// It says the mode as configured and never claims more: what the kernel
// lacks of it is the enforcement's to add (weakness).
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
	b.WriteString("sandbox: ")
	b.WriteString(string(mode))
	if network {
		b.WriteString(", network on")
	}
	return b.String()
}

// Warning is the one line `agentsh exec` prints on stderr when the mode
// asked for cannot be had on this system; "" when nothing is lost that the
// configuration alone can tell.
func Warning(mode Mode) string {
	if mode == Off || mode == "" || Unavailable() == "" {
		return ""
	}
	return "sandbox off: " + Unavailable() + "; the command runs unconfined"
}

package main

import (
	"os"
	"testing"

	"github.com/creack/pty"
)

// TestAnswerTextOnATerminal: `agentsh -p` prints the model's
// answer sanitized when stdout is a terminal (an OSC 52 in the answer would
// set the user's clipboard, a cursor movement redraw the screen), and as
// written into a pipe or a file.
func TestAnswerTextOnATerminal(t *testing.T) {
	master, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	defer tty.Close()
	answer := "done\x1b]52;c;cHduZWQ=\x07 here\x1b[2A\n\tnext"
	if got, want := answerText(tty, answer), "done here\n\tnext"; got != want {
		t.Errorf("on a terminal: %q, want %q", got, want)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if got := answerText(w, answer); got != answer {
		t.Errorf("into a pipe: %q, want it as written", got)
	}
}

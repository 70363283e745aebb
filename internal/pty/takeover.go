package pty

import (
	"strings"
	"sync/atomic"
	"time"

	"agentsh/internal/proc"
)

// Takeover says why a program on a terminal wants the user's screen and
// keys (spec §3: the overlay opens only then; plain output streams into the
// transcript).
type Takeover int

// The reasons a program takes the screen.
const (
	TakeoverFullScreen Takeover = iota + 1 // it switched to the alternate screen (vim, less, top)
	TakeoverInput                          // it waits reading its terminal (python3, a prompt)
)

// QuietForTakeover is how long a program blocked reading its terminal must
// have printed nothing before the UI is handed its keys: the user is
// watching, and a wrong guess costs only an overlay.
const QuietForTakeover = 300 * time.Millisecond

// takeoverLook is how often a session with OnTakeover looks at the kernel
// once its program has been quiet for QuietForTakeover.
const takeoverLook = 100 * time.Millisecond

// takeoverState is a session's part of the takeover rule.
type takeoverState struct {
	lastOut atomic.Int64 // UnixNano of the latest output
	took    atomic.Bool
}

// takeover calls OnTakeover once.
func (s *Session) takeover(why Takeover) {
	if s.opts.OnTakeover != nil && s.tk.took.CompareAndSwap(false, true) {
		s.opts.OnTakeover(why)
	}
}

// watchInput hands the keys over when the program waits reading the
// terminal with no output for QuietForTakeover; it ends with the session.
func (s *Session) watchInput() {
	t := time.NewTicker(takeoverLook)
	defer t.Stop()
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		if s.tk.took.Load() {
			return
		}
		if time.Since(time.Unix(0, s.tk.lastOut.Load())) >= QuietForTakeover &&
			proc.ReadingTerminal(s.ForegroundPgrp(), s.Pid(), s.tty) {
			s.takeover(TakeoverInput)
			return
		}
	}
}

// FullScreenOutput is the output a program that used the alternate screen
// reports (spec §3): its last full screen, with "[notice]" first when
// notice is set, instead of its stream of redraws (the artifact keeps the
// stream). ok is false for a program that never used it.
func FullScreenOutput(scr *Screen, notice string) (text string, ok bool) {
	if scr == nil {
		return "", false
	}
	txt, ok := scr.FullScreenText()
	if !ok {
		return "", false
	}
	if notice != "" {
		txt = "[" + notice + "]\n" + txt
	}
	return txt + "\n", true
}

// applyFullScreen puts a full-screen program's last screen into res.
func applyFullScreen(res *Result, scr *Screen, notice string) {
	if out, ok := FullScreenOutput(scr, notice); ok {
		res.Output = out
		res.OutputLines, res.OutputBytes = strings.Count(out, "\n"), len(out)
	}
}

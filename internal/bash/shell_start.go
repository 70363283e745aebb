package bash

import (
	"agentsh/internal/guard"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const startTimeout = 10 * time.Second // shell start and snapshot sourcing

// runtimePrefix names the shells' runtime folders in the engine folder.
const runtimePrefix = "sh-"

// copySnapshot copies cfg's rc snapshot, checked to be what agentsh took,
// into dir (a shell's or a program's own folder: a confined view has
// nothing else of the engine folder) and returns the copy's path; "" when
// there is no snapshot or it does not check.
func copySnapshot(cfg ShellConfig, dir string) (string, error) {
	if cfg.SnapshotPath == "" {
		return "", nil
	}
	rc := snapshotContent(cfg.SnapshotPath)
	if rc == nil {
		return "", nil
	}
	rcPath := filepath.Join(dir, "rc")
	if err := writeNew(rcPath, rc); err != nil {
		return "", err
	}
	return rcPath, nil
}

// startSession starts bash in its own session and process group, below a
// guardian (internal/guard), and waits until it has sourced the snapshot and
// defined the protocol functions.
func startSession(cfg ShellConfig, key, cwd string, grace time.Duration) (*shellSession, error) {
	// The engine folder is this process's, 0700, outside every writable
	// root; a sandbox's view binds back only this shell's own folder.
	engine, err := guard.EngineDir()
	if err != nil {
		return nil, fmt.Errorf("start shell: %w", err)
	}
	dir, err := os.MkdirTemp(engine, runtimePrefix)
	if err != nil {
		return nil, fmt.Errorf("start shell: %w", err)
	}
	s := &shellSession{cfg: cfg, key: key, dir: dir,
		status: make(chan string, 8), done: make(chan struct{})}
	s.marker = []byte(markerVar + "=" + randomHex(8))
	fail := func(err error) (*shellSession, error) {
		s.closeTerminal()
		os.RemoveAll(dir)
		return nil, fmt.Errorf("start shell: %w", err)
	}
	if cfg.TerminalStdin {
		if err := s.openTerminal(); err != nil {
			return fail(err)
		}
	}
	// The snapshot is sourced from a copy in the shell's own folder, of
	// content checked to be what agentsh took (a confined shell's view
	// has nothing else of the engine folder).
	snap := ""
	if rcPath, err := copySnapshot(cfg, dir); err != nil {
		return fail(err)
	} else if rcPath != "" {
		snap = `\builtin . ` + shellQuote(rcPath) + ` >/dev/null 2>&1 </dev/null`
	}
	if s.ttyPath != "" {
		// Opening the terminal once makes it bash's controlling terminal
		// now, not at the first run's redirection: ctrl+c typed the moment
		// a command starts must already reach it.
		snap = `: <` + shellQuote(s.ttyPath) + "\n" + snap
	}
	initPath := filepath.Join(dir, "init")
	alias := requestAliasFor(s.ttyPath)
	initText := fmt.Appendf(nil, initScript, placeholderFds, shellQuote(dir), snap, alias, alias, alias)
	if err := writeNew(initPath, initText); err != nil {
		return fail(err)
	}
	// Socketpairs, not pipes: open(2) of /proc/<pid>/fd/N fails on a
	// socket, so no process can reach either channel by path.
	ctlW, ctlR, err := socketPair()
	if err != nil {
		return fail(err)
	}
	stR, stW, err := socketPair()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return fail(err)
	}
	// A read of the status fd by a command sees EOF; what a command writes
	// into its saved control fd is read and dropped (discardControl), so it
	// neither piles up nor kills the shell with SIGPIPE.
	_ = shutdownFile(stR, syscall.SHUT_WR)
	if st, err := ctlR.Stat(); err == nil {
		if sys, ok := st.Sys().(*syscall.Stat_t); ok {
			s.ctlLink = "socket:[" + strconv.FormatUint(sys.Ino, 10) + "]"
		}
	}
	_ = cwd // the first run cds itself; a missing dir must not fail the start
	// A sandbox whose temp directory holds a denied folder cannot make
	// new entries there: the shell gets a temp folder of its own.
	env := map[string]string{markerVar: string(s.marker[len(markerVar)+1:])}
	writable, cleanup := []string{dir}, []string{dir}
	if cfg.Sandbox.NeedsOwnTemp() {
		if tmp, err := os.MkdirTemp("", "agentsh-sandbox-tmp-"); err == nil {
			env["TMPDIR"] = tmp
			s.ownEnv = map[string]string{"TMPDIR": tmp}
			writable, cleanup = append(writable, tmp), append(cleanup, tmp)
		}
	}
	own := writable
	if s.ttyPath != "" {
		own = append(own[:len(own):len(own)], s.ttyPath) // its own terminal stays in its view
	}
	sb, err := guardSandbox(cfg.Sandbox, own...)
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		stR.Close()
		stW.Close()
		return fail(err)
	}
	g, err := guard.Start(guard.Cmd{
		Path: cfg.Path,
		Args: []string{filepath.Base(cfg.Path), "--noprofile", "--norc"}, // messages read "bash: …" as in a terminal
		Env:  cfg.env(env),
		// stdin is the control socket, fd 3 the status socket.
		Files:   []*os.File{ctlR, nil, nil, stW},
		Setsid:  true,
		Marker:  s.marker,
		Grace:   grace,
		Cleanup: cleanup,
		Sandbox: sb,
	})
	if sb != nil && sb.Ruleset != nil {
		sb.Ruleset.Close()
	}
	ctlR.Close()
	stW.Close()
	if err != nil {
		ctlW.Close()
		stR.Close()
		return fail(err)
	}
	s.guard, s.pid, s.ctl = g, g.Pid(), ctlW
	s.next = make(chan preparedFifo, preparedAhead)
	for i := 0; i < preparedAhead; i++ {
		s.schedulePrepare()
	}
	if s.cmdFile, err = os.OpenFile(filepath.Join(dir, "c"), os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o600); err != nil {
		s.close()
		return nil, fmt.Errorf("start shell: %w", err)
	}
	go func() {
		s.exit, _ = g.ExitCode()
		close(s.done)
	}()
	s.st = stR
	go s.readStatus(stR)
	go discardControl(ctlW)
	// What is sourced is checked before it is sourced.
	if got, err := readOwnFile(initPath); err != nil || !bytes.Equal(got, initText) {
		s.close()
		return nil, fmt.Errorf("start shell: %s changed before the shell read it", initPath)
	}
	if _, err := io.WriteString(ctlW, `\builtin . `+shellQuote(initPath)+"\n"); err != nil {
		// Its input closed: the shell is gone already (dash, zsh and fish
		// refuse bash's options at once), which says more than the pipe.
		select {
		case <-s.done:
			err = errNeedsBash(cfg.Path)
		case <-time.After(startTimeout):
			err = fmt.Errorf("start shell: %w", err)
		}
		s.close()
		return nil, err
	}
	timer := time.NewTimer(startTimeout)
	defer timer.Stop()
	select {
	case line, ok := <-s.status:
		if ok && strings.HasPrefix(line, "R ") {
			return s, nil
		}
		s.close()
		return nil, errNeedsBash(cfg.Path)
	case <-timer.C:
		s.close()
		return nil, fmt.Errorf("start shell: %s did not become ready within %v", cfg.Path, startTimeout)
	}
}

// close ends the shell and every process of its session, including
// background jobs left by earlier runs.
func (s *shellSession) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	ling := s.lingering
	s.lingering = nil
	s.mu.Unlock()
	s.broken.Store(true)
	if s.ctl != nil {
		s.ctl.Close() // EOF on its script: an idle shell exits by itself, running EXIT traps
	}
	if s.guard != nil {
		select {
		case <-s.done:
		case <-time.After(20 * time.Millisecond):
		}
		s.guard.Stop() // after a cancel it has already swept: returns at once
	}
	for _, f := range ling {
		f.Close()
	}
	if s.st != nil {
		s.st.Close() // a forked subshell may still hold the shell's end
	}
	s.prepWG.Wait()
	for drained := false; !drained; {
		select {
		case p := <-s.next:
			if p.err == nil {
				p.rd.Close()
				p.hold.Close()
			}
		default:
			drained = true
		}
	}
	if s.cmdFile != nil {
		s.cmdFile.Close()
	}
	s.closeTerminal()
	os.RemoveAll(s.dir)
}

package confinedfs

import (
	"fmt"
	"os"
	"strconv"
	"time"

	"agentsh/internal/guard"
	"agentsh/internal/pty"
)

// programMarker names the environment entry of a program StartProgram
// started.
const programMarker = "AGENTSH_FSPROG_MARK"

// Program is a program started in f's view (StartProgram).
type Program struct{ p *guard.Process }

// StartProgram runs path with argv (argv[0] included) in dir, in the same
// sandbox as f's helper (a search tool such as ripgrep then reads only
// what the policy lets it read); stdout and stderr become its descriptors
// 1 and 2 (nil: /dev/null). env nil is this process's environment.
func (f *FS) StartProgram(path string, argv []string, dir string, env []string, stdout, stderr *os.File) (*Program, error) {
	sb, err := pty.GuardSandbox(f.policy)
	if err != nil {
		return nil, fmt.Errorf("sandbox for %s: %w", path, err)
	}
	if sb != nil && sb.Ruleset != nil {
		defer sb.Ruleset.Close()
	}
	if env == nil {
		env = os.Environ()
	}
	// The marker lets the guardian's sweep find whatever the program left,
	// even outside its tree.
	marker := programMarker + "=" + strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(helperSeq.Add(1), 10)
	env = append(env[:len(env):len(env)], marker)
	p, err := guard.Start(guard.Cmd{Path: path, Args: argv, Env: env, Dir: dir, Marker: []byte(marker),
		Files: []*os.File{nil, stdout, stderr}, Grace: time.Second, Sandbox: sb})
	if err != nil {
		return nil, err
	}
	return &Program{p: p}, nil
}

// Wait waits for the program's exit and returns its status as a shell
// reports it (128+N for signal N), then ends whatever it left running.
func (p *Program) Wait() int {
	code, _ := p.p.ExitCode()
	p.p.Stop()
	return code
}

// Stop ends the program and every process below it.
func (p *Program) Stop() { p.p.Stop() }

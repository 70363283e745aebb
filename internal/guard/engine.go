package guard

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// EngineBase is the folder under which every agentsh process keeps its
// engine files (shell runtime folders, command files, the rc snapshot):
// $XDG_RUNTIME_DIR/agentsh when the user has a runtime folder, else
// agentsh's data folder's run/ ($XDG_DATA_HOME/agentsh/run, default
// ~/.local/share/agentsh/run), else a folder of the user's own in the temp
// directory. It is never a place a sandbox makes writable: the sandbox's
// mount view masks it and binds back only a shell's own runtime folder, so
// a confined command can touch neither the user's shells' files nor
// another agentsh's.
func EngineBase() string {
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		if st, err := os.Stat(d); err == nil && st.IsDir() && syscall.Access(d, 2 /* W_OK */) == nil {
			return filepath.Join(d, "agentsh")
		}
	}
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "agentsh", "run")
	}
	if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
		return filepath.Join(home, ".local", "share", "agentsh", "run")
	}
	return filepath.Join(os.TempDir(), "agentsh-run-"+strconv.Itoa(os.Getuid()))
}

var engine struct {
	sync.Mutex
	dir string // "" = not made yet
}

// makeEngineDir makes this process's folder under EngineBase (the base
// 0700 and the user's own), first removing the folders dead agentsh
// processes left there.
func makeEngineDir() (string, error) {
	base := EngineBase()
	if err := os.MkdirAll(base, 0o700); err != nil {
		return "", fmt.Errorf("engine folder: %w", err)
	}
	// A folder someone else made (in a shared temp directory) or left
	// open to others would let them reach the engine's files.
	st, err := os.Lstat(base)
	if err != nil {
		return "", fmt.Errorf("engine folder: %w", err)
	}
	sys, ok := st.Sys().(*syscall.Stat_t)
	if !st.IsDir() || !ok || int(sys.Uid) != os.Getuid() {
		return "", fmt.Errorf("engine folder %s: not a folder of this user", base)
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(base, 0o700); err != nil {
			return "", fmt.Errorf("engine folder: %w", err)
		}
	}
	RemoveStale(base, enginePrefix)
	d, err := MkdirOwned(base, enginePrefix)
	if err != nil {
		return "", fmt.Errorf("engine folder: %w", err)
	}
	return d, nil
}

// enginePrefix names a process's folder under EngineBase after its owner
// (MkdirOwned), so a later start removes the one a killed agentsh left.
const enginePrefix = "p-"

// EngineDir is this process's own 0700 folder under EngineBase, made at
// the first call (and again if it was removed); the engine's runtime
// folders and snapshots live in it. It is removed by RemoveEngineDir, or by
// the next agentsh once this one is gone.
func EngineDir() (string, error) {
	engine.Lock()
	defer engine.Unlock()
	if engine.dir != "" {
		if st, err := os.Lstat(engine.dir); err == nil && st.IsDir() {
			return engine.dir, nil
		}
	}
	d, err := makeEngineDir()
	if err != nil {
		return "", err
	}
	engine.dir = d
	return d, nil
}

// RemoveEngineDir removes this process's engine folder, if it made one:
// called on exit, once every shell is closed.
func RemoveEngineDir() {
	engine.Lock()
	defer engine.Unlock()
	if engine.dir != "" {
		os.RemoveAll(engine.dir)
		engine.dir = ""
	}
}

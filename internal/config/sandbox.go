package config

// The sandbox settings: sandbox.mode, sandbox.writablePaths,
// sandbox.network, sandbox.denyRead and yolo, what the flags say over them,
// and the Policy the model's shells get. Kept apart from the other keys.

import (
	"agentsh/internal/sandbox"
	"agentsh/internal/xdg"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// SandboxSettings is the sandbox part of the settings, as written (paths
// not yet resolved).
type SandboxSettings struct {
	Mode          sandbox.Mode // sandbox.mode (default sandbox.DefaultMode)
	WritablePaths []string     // sandbox.writablePaths: writable besides the working directory and the temp directory
	Network       bool         // sandbox.network "on" (default "off")
	DenyRead      []string     // sandbox.denyRead; nil = DefaultDenyRead()
	Yolo          bool         // yolo: no sandbox and no asking
}

// DefaultSandboxSettings is the sandbox when nothing is configured.
func DefaultSandboxSettings() SandboxSettings { return SandboxSettings{Mode: sandbox.DefaultMode} }

// DefaultDenyRead is sandbox.denyRead when not set: the user's keys and
// cloud credentials, and agentsh's own settings and sessions (the
// session's own artifacts are given back, Policy.AllowRead).
func DefaultDenyRead() []string {
	return []string{"~/.ssh", "~/.gnupg", "~/.aws", "~/.config/gcloud", xdg.ConfigDir(), xdg.DataDir()}
}

// SandboxFlags are the command line's word over the sandbox settings
// (--sandbox MODE, --yolo), or an RPC client's (set_sandbox).
type SandboxFlags struct {
	Mode sandbox.Mode // "" = as the settings say
	Yolo bool
}

// ErrYoloAndSandbox refuses --yolo together with --sandbox: one says off,
// the other names a mode.
var ErrYoloAndSandbox = errors.New("--yolo and --sandbox cannot be combined")

// With is s under the flags: --yolo turns everything off; --sandbox MODE
// beats sandbox.mode and a yolo setting.
func (s SandboxSettings) With(f SandboxFlags) SandboxSettings {
	switch {
	case f.Yolo:
		s.Yolo = true
	case f.Mode != "":
		s.Mode, s.Yolo = f.Mode, false
	}
	return s
}

// Effective is the mode the model's shells run in: off under yolo.
func (s SandboxSettings) Effective() sandbox.Mode {
	if s.Yolo || s.Mode == "" {
		return sandbox.Off
	}
	return s.Mode
}

// Describe is the state in a few words for the status line.
func (s SandboxSettings) Describe() string {
	return sandbox.Describe(s.Effective(), s.Network, s.Yolo)
}

// Policy is the confinement of the model's shells for a session started
// in workdir whose full outputs go to artifactsDir ("" = none): nil when
// the sandbox is off, under yolo, or where this system cannot confine.
// The working directory is the session's start directory, not where a
// `cd` has since moved its shells: a command cannot widen what it may
// write. Relative paths are taken from workdir; "~" is the home directory
// (paths under "~" are left out when there is none).
func (s SandboxSettings) Policy(workdir, artifactsDir string) *sandbox.Policy {
	mode := s.Effective()
	if mode == sandbox.Off || sandbox.Unavailable() != "" {
		return nil
	}
	if abs, err := filepath.Abs(workdir); err == nil {
		workdir = abs
	}
	home := xdg.Home()
	resolve := func(paths []string) []string {
		out := make([]string, 0, len(paths))
		for _, p := range paths {
			if r, ok := resolvePath(p, home, workdir); ok {
				out = append(out, r)
			}
		}
		return out
	}
	p := &sandbox.Policy{Mode: mode, Workdir: workdir, Network: s.Network}
	if mode == sandbox.WorkspaceWrite {
		p.Writable = append(resolve(s.WritablePaths), filepath.Clean(os.TempDir()))
	}
	deny := s.DenyRead
	if deny == nil {
		deny = DefaultDenyRead()
	}
	p.DenyRead = resolve(deny)
	if artifactsDir != "" {
		if abs, err := filepath.Abs(artifactsDir); err == nil {
			p.AllowRead = []string{abs}
		}
	}
	return p
}

// resolvePath makes a configured path absolute: "~" and "~/…" under home,
// a relative one under base. ok is false for "~…" without a home.
func resolvePath(p, home, base string) (string, bool) {
	switch {
	case p == "~" || strings.HasPrefix(p, "~/"):
		if home == "" {
			return "", false
		}
		return filepath.Join(home, p[1:]), true
	case filepath.IsAbs(p):
		return filepath.Clean(p), true
	}
	return filepath.Join(base, p), true
}

// applySandbox fills s.Sandbox from the merged tree (validated already).
func (s *Settings) applySandbox() {
	s.Sandbox = DefaultSandboxSettings()
	if v, ok := s.Lookup("sandbox.mode"); ok && v != nil {
		s.Sandbox.Mode = sandbox.Mode(v.(string))
	}
	if v, ok := s.Lookup("sandbox.writablePaths"); ok && v != nil {
		s.Sandbox.WritablePaths = stringList(v)
	}
	if v, ok := s.Lookup("sandbox.network"); ok && v != nil {
		s.Sandbox.Network = v.(string) == "on"
	}
	if v, ok := s.Lookup("sandbox.denyRead"); ok && v != nil {
		s.Sandbox.DenyRead = stringList(v)
	}
	if v, ok := s.Lookup("yolo"); ok && v != nil {
		s.Sandbox.Yolo = v.(bool)
	}
}

func stringList(v any) []string {
	arr := v.([]any)
	out := make([]string, 0, len(arr))
	for _, el := range arr {
		out = append(out, el.(string))
	}
	return out
}

// validateSandbox checks the sandbox keys and yolo.
func validateSandbox(tree map[string]any, fail func(key, msg string) error) error {
	if v, ok := tree["yolo"]; ok && v != nil {
		if _, ok := v.(bool); !ok {
			return fail("yolo", "expected boolean, got "+jsonValue(v))
		}
	}
	v, ok := tree["sandbox"]
	if !ok || v == nil {
		return nil
	}
	sb, ok := v.(map[string]any)
	if !ok {
		return fail("sandbox", "expected object, got "+jsonKind(v))
	}
	if v, ok := sb["mode"]; ok && v != nil {
		if str, _ := v.(string); str != string(sandbox.WorkspaceWrite) && str != string(sandbox.ReadOnly) && str != string(sandbox.Off) {
			return fail("sandbox.mode", `must be "workspace-write", "read-only" or "off", got `+jsonValue(v))
		}
	}
	if v, ok := sb["network"]; ok && v != nil {
		if str, _ := v.(string); str != "on" && str != "off" {
			return fail("sandbox.network", `must be "on" or "off", got `+jsonValue(v))
		}
	}
	for _, key := range []string{"writablePaths", "denyRead"} {
		v, ok := sb[key]
		if !ok || v == nil {
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			return fail("sandbox."+key, "expected array of paths, got "+jsonKind(v))
		}
		for i, el := range arr {
			k := "sandbox." + key + "[" + strconv.Itoa(i) + "]"
			p, ok := el.(string)
			switch {
			case !ok:
				return fail(k, "expected string, got "+jsonKind(el))
			case strings.TrimSpace(p) == "":
				return fail(k, "must not be empty")
			case strings.HasPrefix(p, "~") && p != "~" && !strings.HasPrefix(p, "~/"):
				return fail(k, "only ~ and ~/… are expanded, got "+jsonValue(p))
			}
		}
	}
	return nil
}

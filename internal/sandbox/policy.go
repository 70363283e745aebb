// Package sandbox confines the model's commands: what a shell
// may write, read and reach. Policy is what the user chose; the enforcement
// is applied by the guardian (internal/guard) to the shell it starts, so the
// shell and every descendant run confined while the guardian stays free to
// sweep and clean up. See docs/decisions/0009-sandbox.md.
//
// For the surfaces:
//
//   - Detect() tells what the kernel offers (Landlock ABI, user and network
//     namespaces); Detect().Describe(policy) is the one line for the status
//     line and `agentsh exec --sandbox …` ("sandbox: workspace-write,
//     network off; sandbox weaker: …"), and Weaknesses lists what is not
//     enforced. A weaker sandbox is never silently off.
//   - Policy.Confine(runtimeDir) makes a Confinement for one shell start:
//     a Landlock ruleset and whether to give the shell a network namespace
//     of its own. guard.Cmd.Sandbox takes it.
//
// What a confined shell may do: read everything but DenyRead (a denied
// folder's names stay listable in its parent; new entries that appear in a
// parent of a denied folder after the start are unreadable); write, under
// WorkspaceWrite, in Workdir, Writable, the temp directories, /dev/shm and
// the user's cache folder (GOCACHE); under ReadOnly only in the shell's
// runtime folder; use the null devices and terminals; signal only its own
// processes. Without Network it runs in a network namespace with only
// loopback (up): no outside host, not this host's 127.0.0.1, but servers it
// starts itself work.
package sandbox

import (
	"fmt"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// Mode is the sandbox mode of the model's commands (setting sandbox.mode,
// flag --sandbox).
type Mode string

// The modes.
const (
	// WorkspaceWrite: read everywhere but DenyRead, write only in the
	// session's working directory, the temp directory and WritablePaths;
	// no network unless Network.
	WorkspaceWrite Mode = "workspace-write"
	// ReadOnly: read everywhere but DenyRead, write nowhere but what a
	// shell needs to run (its runtime folder, /dev/null, terminals).
	ReadOnly Mode = "read-only"
	// Off: no confinement.
	Off Mode = "off"
)

// DefaultMode is sandbox.mode when not set.
const DefaultMode = WorkspaceWrite

// ParseMode reads a mode as the setting and the flag spell it.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case WorkspaceWrite, ReadOnly, Off:
		return m, nil
	}
	return "", fmt.Errorf("unknown sandbox mode %q (want %s, %s or %s)", s, WorkspaceWrite, ReadOnly, Off)
}

// Policy is the confinement of one shell: what the user chose, resolved
// to absolute paths for one working directory. The zero value and nil
// confine nothing.
type Policy struct {
	Mode Mode
	// Workdir is the session's working directory: writable under
	// WorkspaceWrite. Writable adds to it (sandbox.writablePaths, the
	// temp directory); DenyRead takes from what is readable
	// (sandbox.denyRead).
	Workdir  string
	Writable []string
	DenyRead []string
	// AllowRead gives back reading beneath DenyRead: the session's own
	// artifact folder inside agentsh's data folder.
	AllowRead []string
	// Network allows network access (sandbox.network "on").
	Network bool
}

// Enabled reports whether p confines anything.
func (p *Policy) Enabled() bool { return p != nil && p.Mode != "" && p.Mode != Off }

// Key is p's identity for the shell cache: two shells are shared only under
// equal policies, and a confined shell never serves an unconfined run.
func (p *Policy) Key() string {
	if !p.Enabled() {
		return "off"
	}
	var b strings.Builder
	b.WriteString(string(p.Mode))
	b.WriteString(" net=")
	b.WriteString(strconv.FormatBool(p.Network))
	b.WriteString(" dir=")
	b.WriteString(strconv.Quote(p.Workdir))
	for _, l := range []struct {
		name  string
		paths []string
	}{{" w=", p.Writable}, {" deny=", p.DenyRead}, {" allow=", p.AllowRead}} {
		ps := append([]string(nil), l.paths...)
		sort.Strings(ps)
		b.WriteString(l.name)
		for _, s := range ps {
			b.WriteString(strconv.Quote(filepath.Clean(s)))
		}
	}
	return b.String()
}

package sandbox

import (
	"os"
	"path/filepath"
)

// DisarmGit removes what a confined command may have planted in the
// repositories of p's writable roots for the user's unconfined git: a
// commondir file in a .git folder. git reads its config (and so runs its
// core.fsmonitor, its hooks) from the folder that file names, and the
// view cannot keep the file from being made, since git itself makes lock
// files beside it. git never writes one there (a linked worktree's
// commondir lives in the main repository's .git/worktrees/NAME, which the
// view keeps read-only), so removing it loses nothing of git's. Called
// before a command runs outside the sandbox; it returns what it removed.
func (p *Policy) DisarmGit() []string {
	if !p.Enabled() || p.Mode != WorkspaceWrite {
		return nil
	}
	var removed []string
	for _, r := range append([]string{p.Workdir}, p.Writable...) {
		if r == "" {
			continue
		}
		git := filepath.Join(r, ".git")
		if st, err := os.Lstat(git); err != nil || !st.IsDir() {
			continue
		}
		cd := filepath.Join(git, "commondir")
		if _, err := os.Lstat(cd); err == nil && os.Remove(cd) == nil {
			removed = append(removed, cd)
		}
	}
	return removed
}

// DisarmedNote is the line that tells the user what DisarmGit removed.
func DisarmedNote(removed []string) string {
	if len(removed) == 0 {
		return ""
	}
	s := "[agentsh: removed " + removed[0]
	for _, r := range removed[1:] {
		s += ", " + r
	}
	return s + ", which a sandboxed command wrote: it would make git read its config from a folder the model chose]"
}

package sandbox

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"agentsh/internal/fsview"
)

// serverSockets are the folders and sockets of servers that act for the
// user outside the sandbox: the user's runtime folder (D-Bus, podman,
// rootless docker, gpg-agent, pipewire, Wayland), tmux's and X11's socket
// folders, the system docker and podman sockets, GNU screen's folder.
func serverSockets() []string {
	uid := strconv.Itoa(os.Getuid())
	s := []string{"/run/user/" + uid, "/tmp/tmux-" + uid, "/tmp/.X11-unix", "/tmp/.ICE-unix",
		"/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock", "/run/screen"}
	if d := os.Getenv("XDG_RUNTIME_DIR"); filepath.IsAbs(d) {
		s = append(s, d)
	}
	if d := os.Getenv("TMUX_TMPDIR"); filepath.IsAbs(d) {
		s = append(s, filepath.Join(d, "tmux-"+uid))
	}
	return s
}

// ptsDir holds the pseudo-terminals' slave devices.
const ptsDir = "/dev/pts"

// writableRoots are the folders p lets a shell write, before extra.
func (p *Policy) writableRoots() []string {
	if p.Mode != WorkspaceWrite {
		return nil
	}
	w := append([]string{p.Workdir, os.TempDir(), "/tmp", "/dev/shm"}, p.Writable...)
	return append(w, cacheDirs()...)
}

// lstat reports whether path exists and whether it is a folder.
func lstat(path string) (exists, dir bool) {
	st, err := os.Lstat(path)
	if err != nil {
		return false, false
	}
	return true, st.IsDir()
}

// View is the mount view of p for one shell start (see
// docs/decisions/0011-sandbox-mount-view.md): the writable roots bound back
// read-write over a read-only tree, extra (the shell's runtime folders)
// too; DenyRead, hidden (the engine's folder) and the sockets of outside
// servers masked, AllowRead given back inside the masks; the protected
// paths inside writable roots read-only, and every folder between a root
// and a protected or masked path pinned (made a mount point, so it cannot
// be renamed away with what it holds). Under WorkspaceWrite it makes an
// empty .agentsh in the working directory if there is none: a missing
// path cannot be covered, and the model writing .agentsh/settings.json is
// the attack this view exists for.
func (p *Policy) View(hidden, extra []string) fsview.View {
	if !p.Enabled() {
		return nil
	}
	if p.Mode == WorkspaceWrite && p.Workdir != "" {
		if ok, _ := lstat(filepath.Join(p.Workdir, ".agentsh")); !ok {
			_ = os.Mkdir(filepath.Join(p.Workdir, ".agentsh"), 0o755)
		}
	}
	deny := append(resolve(p.DenyRead), unsearchable(p.DenyRead)...)
	denied := func(path string) bool {
		for _, d := range deny {
			if under(path, d) {
				return true
			}
		}
		return false
	}
	var roots []string
	for _, w := range resolve(p.writableRoots()) {
		// A root this process cannot search (a model's chmod 000 of
		// its workspace) hides what must be protected in it: it stays
		// read-only until it can be looked into again.
		if !denied(w) && unix.Access(w, unix.X_OK) == nil {
			roots = append(roots, w)
		}
	}
	extras := resolve(extra)
	// Never nil: a view of no ops still makes the whole tree read-only
	// (read-only mode with nothing to mask).
	ops := fsview.View{}
	add := func(k fsview.Kind, path string) { ops = append(ops, fsview.Op{Kind: k, Path: path}) }
	for _, w := range roots {
		add(fsview.Bind, w)
	}
	for _, e := range extras {
		add(fsview.Bind, e)
	}
	var masks []string
	mask := func(path string) {
		if ok, dir := lstat(path); ok {
			if dir {
				add(fsview.MaskDir, path)
			} else {
				add(fsview.MaskFile, path)
			}
			masks = append(masks, path)
		}
	}
	for _, d := range deny {
		mask(d)
	}
	for _, h := range append(resolve(hidden), unsearchable(hidden)...) {
		mask(h)
	}
	temps := resolve([]string{os.TempDir(), "/tmp"})
	holdsRoot := func(dir string) bool {
		for _, r := range append(append([]string(nil), roots...), temps...) {
			if under(r, dir) {
				return true
			}
		}
		return dir == "/"
	}
	for _, s := range resolve(serverSockets()) {
		if !holdsRoot(s) {
			mask(s)
		}
	}
	// ssh-agent's socket, and the socket of the tmux agentsh runs in
	// ($TMUX: "socket,pid,session"), wherever they are (tmux -S puts it
	// anywhere): a read-only folder does not keep a program from
	// connecting to a socket in it.
	tmuxSock, _, _ := strings.Cut(os.Getenv("TMUX"), ",")
	for i, sock := range []string{os.Getenv("SSH_AUTH_SOCK"), tmuxSock} {
		if !filepath.IsAbs(sock) {
			continue
		}
		if r := resolve([]string{sock}); len(r) == 1 {
			// Its folder (ssh-agent's own, the forwarded one, tmux's
			// tmux-UID), unless that folder is a writable root or holds
			// one, or is any folder a tmux -S socket was put in (HOME,
			// say): then the socket alone.
			dir := filepath.Dir(r[0])
			if own := i == 0 || strings.HasPrefix(filepath.Base(dir), "tmux-"); own && !holdsRoot(dir) {
				mask(dir)
			} else {
				mask(r[0])
			}
		}
	}
	// Terminals: every pseudo-terminal there is when the program starts,
	// but its own (in extra), is covered. The user's (the TUI's, a `!`
	// command's) must be neither written to, which draws on the user's
	// screen, nor read from, which takes what the user types. Terminals
	// opened later (the program's own: a nested script, tmux, a job's)
	// are not covered.
	keep := map[string]bool{}
	for _, e := range extras {
		keep[e] = true
	}
	if ents, err := os.ReadDir(ptsDir); err == nil {
		for _, e := range ents {
			path := filepath.Join(ptsDir, e.Name())
			if _, err := strconv.Atoi(e.Name()); err == nil && !keep[path] {
				add(fsview.MaskFile, path)
			}
		}
	}
	masked := func(path string) bool {
		for _, m := range masks {
			if under(path, m) {
				return true
			}
		}
		return false
	}
	for _, a := range resolve(p.AllowRead) {
		if masked(a) {
			add(fsview.ReadOnly, a)
		}
	}
	// protectedNames paths: where a writable root would let the model change
	// them.
	rootOf := func(path string) string {
		best := ""
		for _, r := range roots {
			if under(path, r) && len(r) > len(best) {
				best = r
			}
		}
		return best
	}
	var protected []string
	protect := func(path string) {
		if masked(path) || rootOf(path) == "" {
			return
		}
		if _, err := os.Lstat(path); errors.Is(err, fs.ErrNotExist) {
			return
		} else if err != nil {
			// Unknown (a folder above it made unsearchable): that
			// folder is protected whole instead.
			if dir := filepath.Dir(path); rootOf(dir) != "" && rootOf(dir) != dir {
				add(fsview.ReadOnly, dir)
				protected = append(protected, dir)
			}
			return
		}
		protected = append(protected, path)
		t, err := filepath.EvalSymlinks(path)
		if err == nil && t == path {
			add(fsview.ReadOnly, path)
			return
		}
		// A link: covered where it is (a mount on the link itself, so it
		// cannot be replaced), by what it points to when that is a file,
		// else by an empty file; what it points to is kept read-only too
		// when a writable root holds it.
		if st, serr := os.Stat(path); serr == nil && st.Mode().IsRegular() {
			add(fsview.ReadOnly, path)
		} else {
			add(fsview.MaskFile, path)
		}
		if err == nil && rootOf(t) != "" && !masked(t) {
			add(fsview.ReadOnly, t)
			protected = append(protected, t)
		}
	}
	if p.Mode == WorkspaceWrite {
		for _, r := range roots {
			for _, name := range protectedNames {
				protect(filepath.Join(r, name))
			}
			git := filepath.Join(r, ".git")
			if ok, dir := lstat(git); ok && dir {
				// .git itself is pinned: renamed away, its protected
				// parts would go with it.
				protected = append(protected, git)
				makeGitDirs(git)
				for _, name := range gitProtected {
					protect(filepath.Join(git, name))
				}
				// Submodules' repositories, and linked worktrees' folders
				// (whose commondir and gitdir say where the user's git
				// of that worktree reads its config from).
				for _, sub := range []string{"modules", "worktrees"} {
					if ents, err := os.ReadDir(filepath.Join(git, sub)); err == nil {
						for _, m := range ents {
							if ok, _ := lstat(filepath.Join(git, sub, m.Name(), "HEAD")); ok && sub == "modules" {
								makeGitDirs(filepath.Join(git, sub, m.Name()))
							}
							for _, name := range gitProtected {
								protect(filepath.Join(git, sub, m.Name(), name))
							}
						}
					}
				}
			} else if ok {
				protect(git) // a worktree's or submodule's "gitdir:" file
			}
		}
		if home, err := os.UserHomeDir(); err == nil && filepath.IsAbs(home) {
			if r := resolve([]string{home}); len(r) == 1 {
				for _, name := range rcFiles {
					protect(filepath.Join(r[0], name))
				}
			}
		}
	}
	// Pins: every folder from below a writable root down to a protected
	// or masked path in it (rename(2) refuses to move a mount point).
	pinned := map[string]bool{}
	for _, path := range append(append([]string(nil), protected...), masks...) {
		r := rootOf(path)
		if r == "" {
			continue
		}
		for d := path; d != r && d != "/" && d != "."; d = filepath.Dir(d) {
			if d == path && !isProtectedGit(d) {
				continue
			}
			if !pinned[d] && !masked(d) {
				pinned[d] = true
				add(fsview.Bind, d)
			}
		}
	}
	return sortView(ops)
}

// unsearchable are, for the denied paths this process cannot look up (a
// folder above one made unsearchable, by a model whose workspace holds
// it), the first such folder on the way: masked whole, since what lies
// beneath is unknown and would otherwise be left readable.
func unsearchable(paths []string) []string {
	var out []string
	for _, p := range paths {
		a, err := filepath.Abs(p)
		if err != nil {
			continue
		}
		if _, err := os.Lstat(a); err == nil || errors.Is(err, fs.ErrNotExist) {
			continue
		}
		cur := "/"
		for _, c := range strings.Split(strings.TrimPrefix(a, "/"), "/") {
			next := filepath.Join(cur, c)
			if unix.Access(next, unix.X_OK) != nil {
				out = append(out, next)
				break
			}
			cur = next
		}
	}
	return out
}

// makeGitDirs makes a repository's hooks and info folders, empty, when it
// has none (git init makes both; an empty template or a user's cleanup
// leaves them out): a missing path cannot be kept read-only, and a
// pre-commit hook a confined command made there would run at the user's
// next unconfined commit.
func makeGitDirs(git string) {
	for _, d := range []string{"hooks", "info"} {
		if ok, _ := lstat(filepath.Join(git, d)); !ok {
			_ = os.Mkdir(filepath.Join(git, d), 0o755)
		}
	}
}

// isProtectedGit: a .git folder is pinned itself (its parts are the
// protected paths).
func isProtectedGit(path string) bool { return filepath.Base(path) == ".git" }

// sortView orders ops by depth, then binds before read-only binds before
// masks, so each applies over what is above it.
func sortView(ops fsview.View) fsview.View {
	rank := map[fsview.Kind]int{fsview.Bind: 0, fsview.ReadOnly: 1, fsview.MaskDir: 2, fsview.MaskFile: 2}
	depth := func(p string) int { return strings.Count(p, "/") - boolInt(p == "/") }
	sort.SliceStable(ops, func(i, j int) bool {
		a, b := ops[i], ops[j]
		if da, db := depth(a.Path), depth(b.Path); da != db {
			return da < db
		}
		if rank[a.Kind] != rank[b.Kind] {
			return rank[a.Kind] < rank[b.Kind]
		}
		return a.Path < b.Path
	})
	// The same op twice (a root listed twice, a pin that is a root) is
	// applied once.
	out := ops[:0]
	for i, op := range ops {
		if i == 0 || op != ops[i-1] {
			out = append(out, op)
		}
	}
	return out
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentsh/internal/fsview"
	"agentsh/internal/guard"
	"agentsh/internal/proctest"
	"agentsh/internal/sandbox"
	"agentsh/internal/testkit"

	"github.com/creack/pty"
)

// needView skips when this kernel cannot make the mount view (the status
// line then says so: TestDescribe).
func needView(t *testing.T) {
	t.Helper()
	if f := sandbox.Detect(); !f.Namespaces {
		t.Skipf("no user namespaces: %v", f.NamespacesErr)
	}
}

// outsideDir is a folder beside the package's sources: outside every
// writable root (the temp directory included).
func outsideDir(t *testing.T) string {
	t.Helper()
	return proctest.OutsideDir(t, ".sandbox-view-")
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestViewMetadata: chmod, a set modification time and an xattr on a file
// outside the writable set are refused in both modes (Landlock does not
// mediate them; the read-only tree does), and work inside the workspace.
func TestViewMetadata(t *testing.T) {
	needView(t)
	py := "/usr/bin/python3"
	if _, err := os.Stat(py); err != nil {
		t.Skip("no /usr/bin/python3")
	}
	out := filepath.Join(outsideDir(t), "key")
	write(t, out, "secret\n")
	script := `export LC_ALL=C; f=$1
chmod 604 "$f" && echo chmod
touch -d 2001-01-01 "$f" && echo touch
` + py + ` -c 'import os, sys; os.setxattr(sys.argv[1], "user.agentsh", b"1"); print("xattr")' "$f" 2>/dev/null
echo end`
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.ReadOnly} {
		work := t.TempDir()
		in := filepath.Join(work, "in")
		write(t, in, "in\n")
		p := &sandbox.Policy{Mode: mode, Workdir: work}
		got, _ := runConfined(t, p, work, script, out)
		want := "chmod: changing permissions of '" + out + "': Read-only file system\n" +
			"touch: cannot touch '" + out + "': Read-only file system\nend\n"
		if got != want {
			t.Errorf("%s, outside: got %q, want %q", mode, got, want)
		}
		st, err := os.Stat(out)
		if err != nil || st.Mode().Perm() != 0o644 || st.ModTime().Year() == 2001 {
			t.Errorf("%s: the outside file changed: %v %v", mode, st.Mode(), err)
		}
		if mode == sandbox.WorkspaceWrite {
			if got, _ := runConfined(t, p, work, script, in); got != "chmod\ntouch\nxattr\nend\n" {
				t.Errorf("inside the workspace: %q", got)
			}
		}
	}
}

// git runs git unconfined in dir.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main"}, args...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// TestViewGit: in a workspace that is a repository, .git/config,
// .git/hooks and .git/info are read-only and .git cannot be renamed away
// (with them), while git add, commit and checkout work.
func TestViewGit(t *testing.T) {
	needView(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	work := t.TempDir()
	git(t, work, "init", "-q")
	write(t, filepath.Join(work, "a"), "a\n")
	git(t, work, "add", "a")
	git(t, work, "commit", "-qm", "first")
	// A linked worktree: its folder in .git says where the user's git of
	// that worktree reads its config.
	git(t, work, "worktree", "add", "-q", filepath.Join(t.TempDir(), "linked"))
	config, _ := os.ReadFile(filepath.Join(work, ".git/config"))
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
	got, code := runConfined(t, p, work, `export LC_ALL=C; g() { git -c user.name=t -c user.email=t@t "$@"; }
echo '[core] fsmonitor = touch /tmp/pwned' >> .git/config
echo x > .git/hooks/pre-commit
echo x > .git/info/attributes
echo /evil > .git/worktrees/linked/commondir
mv .git moved
echo b > b && g add b && g commit -qm second && echo committed
g checkout -qb side && echo c > c && g add c && g commit -qm third && g checkout -q main && echo checked-out
ls
echo end`)
	want := "bash: line 2: .git/config: Read-only file system\n" +
		"bash: line 3: .git/hooks/pre-commit: Read-only file system\n" +
		"bash: line 4: .git/info/attributes: Read-only file system\n" +
		"bash: line 5: .git/worktrees/linked/commondir: Read-only file system\n" +
		"mv: cannot move '.git' to 'moved': Device or resource busy\n" +
		"committed\nchecked-out\na\nb\nend\n"
	if got != want || code != 0 {
		t.Errorf("got %q (exit %d), want %q", got, code, want)
	}
	if after, _ := os.ReadFile(filepath.Join(work, ".git/config")); string(after) != string(config) {
		t.Errorf(".git/config changed:\n%s", after)
	}
	if log, err := exec.Command("git", "-C", work, "log", "--format=%s", "side").Output(); err != nil || string(log) != "third\nsecond\nfirst\n" {
		t.Errorf("history: %q, %v", log, err)
	}
}

// TestViewGitNoHooks: a repository without .git/hooks or .git/info (made
// from an empty template, or emptied by its user) gets them, empty, so the
// view keeps them read-only: else a confined command makes
// .git/hooks/pre-commit and the user's next unconfined commit runs it.
func TestViewGitNoHooks(t *testing.T) {
	needView(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	work := t.TempDir()
	git(t, work, "init", "-q", "--template="+t.TempDir())
	for _, d := range []string{"hooks", "info"} {
		if _, err := os.Stat(filepath.Join(work, ".git", d)); err == nil {
			t.Fatalf(".git/%s exists: the template was not empty", d)
		}
	}
	pwned := filepath.Join(outsideDir(t), "pwned")
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
	got, _ := runConfined(t, p, work, `export LC_ALL=C
mkdir -p .git/hooks && printf '#!/bin/sh\ntouch %s\n' "$1" > .git/hooks/pre-commit && chmod +x .git/hooks/pre-commit && echo hook
mkdir -p .git/info && echo '* filter=x' > .git/info/attributes && echo attributes
echo a > a; echo end`, pwned)
	want := "bash: line 2: .git/hooks/pre-commit: Read-only file system\n" +
		"bash: line 3: .git/info/attributes: Read-only file system\nend\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	git(t, work, "add", "a")
	git(t, work, "commit", "-qm", "first")
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the user's commit ran a hook a confined command made")
	}
}

// TestViewProtected: .agentsh (made empty when missing, so settings.json
// cannot be created), .claude, .envrc and the user's rc files (HOME in the
// temp directory, a writable root) are read-only inside writable roots.
func TestViewProtected(t *testing.T) {
	needView(t)
	work := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home)
	write(t, filepath.Join(work, ".claude/settings.json"), "{}\n")
	write(t, filepath.Join(work, ".envrc"), "export A=1\n")
	write(t, filepath.Join(home, ".bashrc"), "# rc\n")
	write(t, filepath.Join(home, ".config/git/config"), "[user]\n")
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
	got, code := runConfined(t, p, work, `export LC_ALL=C; echo '{"yolo":true}' > .agentsh/settings.json
mkdir .agentsh/x
rm -r .agentsh
echo x > .claude/settings.json
echo x > .claude/new
echo x >> .envrc
echo evil >> "$HOME/.bashrc"
mv "$HOME/.bashrc" "$HOME/old"
echo x > "$HOME/other" && echo other
echo x >> "$HOME/.config/git/config"
echo end`)
	want := "bash: line 1: .agentsh/settings.json: Read-only file system\n" +
		"mkdir: cannot create directory '.agentsh/x': Read-only file system\n" +
		"rm: cannot remove '.agentsh': Device or resource busy\n" +
		"bash: line 4: .claude/settings.json: Read-only file system\n" +
		"bash: line 5: .claude/new: Read-only file system\n" +
		"bash: line 6: .envrc: Read-only file system\n" +
		"bash: line 7: " + home + "/.bashrc: Read-only file system\n" +
		"mv: cannot move '" + home + "/.bashrc' to '" + home + "/old': Device or resource busy\n" +
		"other\n" +
		"bash: line 10: " + home + "/.config/git/config: Read-only file system\n" +
		"end\n"
	if got != want || code != 0 {
		t.Errorf("got %q (exit %d), want %q", got, code, want)
	}
	if _, err := os.Stat(filepath.Join(work, ".agentsh/settings.json")); err == nil {
		t.Error(".agentsh/settings.json was created")
	}
	if b, _ := os.ReadFile(filepath.Join(home, ".bashrc")); string(b) != "# rc\n" {
		t.Errorf(".bashrc changed: %q", b)
	}
}

// TestViewTempHome: a HOME and agentsh's data folder in the temp
// directory (CI, a clone under /tmp): the temp directory still takes new
// entries while ~/.ssh and the data folder are unreadable.
func TestViewTempHome(t *testing.T) {
	needView(t)
	home := t.TempDir()
	write(t, filepath.Join(home, ".ssh/id_rsa"), "FAKE KEY\n")
	write(t, filepath.Join(home, ".local/share/agentsh/sessions/s/0.log"), "other session\n")
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: t.TempDir(),
		DenyRead: []string{filepath.Join(home, ".ssh"), filepath.Join(home, ".local/share/agentsh")}}
	got, code := runConfined(t, p, "", `export LC_ALL=C; d=$(mktemp -d /tmp/sbx.XXXXXX) && echo made > "$d/f" && cat "$d/f" && rm -r "$d"
cat "$1/.ssh/id_rsa"
ls -A "$1/.ssh" "$1/.local/share/agentsh"
touch "$1/new" && echo new
echo end`, home)
	want := "made\ncat: " + home + "/.ssh/id_rsa: No such file or directory\n" +
		home + "/.local/share/agentsh:\n\n" + home + "/.ssh:\nnew\nend\n"
	if got != want || code != 0 {
		t.Errorf("got %q (exit %d), want %q", got, code, want)
	}
}

// TestViewEngineBase: the engine's folder is masked but for the shell's
// own runtime folder, which stays writable.
func TestViewEngineBase(t *testing.T) {
	needView(t)
	base := filepath.Join(outsideDir(t), "run")
	own := filepath.Join(base, "p-1", "sh-1")
	write(t, filepath.Join(own, "c"), "mine\n")
	write(t, filepath.Join(base, "p-1", "sh-2", "c"), "another shell\n")
	write(t, filepath.Join(base, "p-2", "sh-1", "c"), "another agentsh\n")
	for _, mode := range []sandbox.Mode{sandbox.WorkspaceWrite, sandbox.ReadOnly} {
		conf, err := (&sandbox.Policy{Mode: mode, Workdir: t.TempDir()}).ConfineHiding([]string{base}, own)
		if err != nil {
			t.Fatal(err)
		}
		got, code := runConfinedBy(t, conf, "", `ls "$1" "$1/p-1"; cat "$1/p-1/sh-2/c"; echo w > "$1/p-1/sh-1/w" && cat "$1/p-1/sh-1/c" "$1/p-1/sh-1/w"`, base)
		conf.Close()
		want := base + ":\np-1\n\n" + base + "/p-1:\nsh-1\ncat: " + base + "/p-1/sh-2/c: No such file or directory\nmine\nw\n"
		if got != want || code != 0 {
			t.Errorf("%s: got %q (exit %d), want %q", mode, got, code, want)
		}
	}
}

// TestViewSockets: a tmux server's socket and an ssh-agent's are out of
// reach (their folders masked), and the variables naming them are gone.
func TestViewSockets(t *testing.T) {
	needView(t)
	marker := filepath.Join(outsideDir(t), "pwned")
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: t.TempDir()}
	if tmux, err := exec.LookPath("tmux"); err == nil {
		srv := exec.Command(tmux, "-L", "agentsh-test", "-f", "/dev/null", "new-session", "-d", "sleep 60")
		srv.Env = append(os.Environ(), "TMUX=")
		if out, err := srv.CombinedOutput(); err != nil {
			t.Fatalf("start tmux: %v %s", err, out)
		}
		defer exec.Command(tmux, "-L", "agentsh-test", "kill-server").Run()
		// The twin, unconfined: the server runs what it is asked.
		if out, err := exec.Command(tmux, "-L", "agentsh-test", "run-shell", "true").CombinedOutput(); err != nil {
			t.Fatalf("the tmux server does not answer outside: %v %s", err, out)
		}
		got, _ := runConfined(t, p, "", `tmux -L agentsh-test run-shell "touch $1" 2>&1 | head -c 200; echo; echo "tmux=${TMUX:-unset}"`, marker)
		if !strings.Contains(got, "agentsh-test (No such file or directory)") || !strings.Contains(got, "tmux=unset") {
			t.Errorf("tmux from inside: %q", got)
		}
		// A pause to show that something does not happen: had the server
		// been reached, its touch would have run by now.
		time.Sleep(100 * time.Millisecond)
		if _, err := os.Stat(marker); err == nil {
			t.Fatal("the tmux server ran a command for the sandbox")
		}
	}
	agent, err := exec.LookPath("ssh-agent")
	if err != nil {
		t.Skip("no ssh-agent")
	}
	sock := filepath.Join(t.TempDir(), "agent.sock")
	a := exec.Command(agent, "-D", "-a", sock)
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Process.Kill(); _ = a.Wait() }()
	testkit.Eventually(t, 0, "the ssh-agent's socket", func() (bool, string) {
		_, err := os.Stat(sock)
		return err == nil, fmt.Sprint(err)
	})
	t.Setenv("SSH_AUTH_SOCK", sock)
	if out, err := exec.Command("ssh-add", "-l").CombinedOutput(); !strings.Contains(string(out), "no identities") {
		t.Fatalf("the agent does not answer outside: %v %s", err, out)
	}
	got, _ := runConfined(t, p, "", `echo "sock=${SSH_AUTH_SOCK:-unset}"; SSH_AUTH_SOCK=$1 ssh-add -l; echo "rc=$?"`, sock)
	if !strings.Contains(got, "sock=unset\n") || strings.Contains(got, "no identities") || !strings.Contains(got, "rc=2") {
		t.Errorf("ssh-agent from inside: %q", got)
	}
}

// TestViewTmuxSocket: agentsh running inside a tmux whose socket is
// where the masks do not look (tmux -S) keeps that server out of reach
// too: $TMUX names it (a read-only folder does not keep a program from
// connecting to a socket in it).
func TestViewTmuxSocket(t *testing.T) {
	needView(t)
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("no tmux")
	}
	sock := filepath.Join(outsideDir(t), "tmux.sock")
	marker := filepath.Join(outsideDir(t), "pwned")
	srv := exec.Command(tmux, "-S", sock, "-f", "/dev/null", "new-session", "-d", "sleep 60")
	srv.Env = append(os.Environ(), "TMUX=")
	if out, err := srv.CombinedOutput(); err != nil {
		t.Fatalf("start tmux: %v %s", err, out)
	}
	defer exec.Command(tmux, "-S", sock, "kill-server").Run()
	if out, err := exec.Command(tmux, "-S", sock, "run-shell", "true").CombinedOutput(); err != nil {
		t.Fatalf("the tmux server does not answer outside: %v %s", err, out)
	}
	t.Setenv("TMUX", sock+",1,0")
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: t.TempDir(), Network: true}
	got, _ := runConfined(t, p, "", `tmux -S "$1" run-shell "touch $2" 2>&1 | head -c 200; echo; echo "tmux=${TMUX:-unset}"`, sock, marker)
	// A pause to show that something does not happen: had the server been
	// reached, its touch would have run by now.
	time.Sleep(100 * time.Millisecond)
	if _, err := os.Stat(marker); err == nil {
		t.Fatalf("the tmux server ran a command for the sandbox: %q", got)
	}
	if !strings.Contains(got, "tmux=unset") || strings.Contains(got, "tmux=/") {
		t.Errorf("tmux from inside: %q", got)
	}
}

// TestViewShellStartupFiles: the other files a shell of the user sources
// at start are read-only too when HOME is inside a writable root:
// ~/.bash_aliases (which Debian's and Ubuntu's ~/.bashrc source), zsh's
// ~/.zshenv (read by every zsh, scripts included), ~/.zlogin,
// ~/.zlogout and fish's ~/.config/fish.
func TestViewShellStartupFiles(t *testing.T) {
	needView(t)
	work := t.TempDir()
	home := t.TempDir()
	t.Setenv("HOME", home)
	names := []string{".bash_aliases", ".zshenv", ".zlogin", ".zlogout", ".config/fish/config.fish"}
	script := "export LC_ALL=C\n"
	want := ""
	for i, n := range names {
		write(t, filepath.Join(home, n), "# mine\n")
		script += `echo evil >> "$HOME/` + n + `"` + "\n"
		want += "bash: line " + strconv.Itoa(i+2) + ": " + home + "/" + n + ": Read-only file system\n"
	}
	got, _ := runConfined(t, &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}, work, script+"echo end")
	if want += "end\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	for _, n := range names {
		if b, _ := os.ReadFile(filepath.Join(home, n)); string(b) != "# mine\n" {
			t.Errorf("%s changed: %q", n, b)
		}
	}
}

// TestViewEscape: the view cannot be undone from inside: not by a user and
// mount namespace of the program's own (its mounts are locked there, and
// Landlock refuses mounting), not through /proc/<pid>/root of agentsh, of
// init or of the guardian (whose other threads keep agentsh's view), not by
// renaming the workspace.
func TestViewEscape(t *testing.T) {
	needView(t)
	dir := outsideDir(t)
	work := t.TempDir()
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
	script := `d=$1
unshare -rm sh -c 'mount -o remount,bind,rw "$1"; mount -o remount,rw /; umount -l "$1"; echo x > "$1/unshare"' sh "$d" 2>/dev/null
for pid in $PPID $2 1 $(pgrep -u "$(id -u)" -x agentsh-guard); do
	{ echo x > "/proc/$pid/root$d/proc-$pid"; } 2>/dev/null
	{ echo x > "/proc/$pid/cwd/../proc-cwd-$pid"; } 2>/dev/null
done
mv "` + work + `" "` + work + `.moved" 2>/dev/null
ls "$d"; echo end`
	got, _ := runConfined(t, p, work, script, dir, strconv.Itoa(os.Getpid()))
	if got != "end\n" {
		t.Errorf("got %q, want %q", got, "end\n")
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("escaped: %s holds %v", dir, ents)
	}
	if _, err := os.Stat(work); err != nil {
		t.Errorf("the workspace was moved: %v", err)
	}
}

// TestDisarmGit: a confined command cannot write .git/config, but it can
// make .git/commondir name a copy of .git with a config of its own, whose
// core.fsmonitor the user's next unconfined `git status` would run.
// DisarmGit, called before every command outside the sandbox, removes it;
// git's own state (the repository works as before) is untouched.
func TestDisarmGit(t *testing.T) {
	needView(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	plant := func(t *testing.T) (work, pwned string) {
		work = t.TempDir()
		git(t, work, "init", "-q")
		write(t, filepath.Join(work, "a"), "a\n")
		git(t, work, "add", "a")
		git(t, work, "commit", "-qm", "first")
		pwned = filepath.Join(outsideDir(t), "pwned")
		p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
		got, code := runConfined(t, p, work, `cp -r .git evil && git config -f evil/config core.fsmonitor "touch $1; false" &&
echo "$PWD/evil" > .git/commondir && echo planted`, pwned)
		if got != "planted\n" || code != 0 {
			t.Fatalf("planting: %q (exit %d)", got, code)
		}
		return work, pwned
	}
	status := func(work string) string {
		out, err := exec.Command("git", "-C", work, "status", "--porcelain").CombinedOutput()
		if err != nil {
			t.Fatalf("git status: %v\n%s", err, out)
		}
		return string(out)
	}

	// The attack is real: without DisarmGit the user's git runs it.
	work, pwned := plant(t)
	status(work)
	if _, err := os.Stat(pwned); err != nil {
		t.Fatalf("git did not follow the planted commondir (%v): the attack this test guards against changed", err)
	}

	work, pwned = plant(t)
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
	removed := p.DisarmGit()
	if want := filepath.Join(work, ".git", "commondir"); len(removed) != 1 || removed[0] != want {
		t.Fatalf("DisarmGit removed %q, want [%s]", removed, want)
	}
	if got := status(work); got != "?? evil/\n" {
		t.Errorf("git status after DisarmGit: %q", got)
	}
	if _, err := os.Stat(pwned); err == nil {
		t.Error("the planted fsmonitor ran after DisarmGit")
	}
	if n := sandbox.DisarmedNote(removed); !strings.Contains(n, removed[0]+", which a sandboxed command wrote") {
		t.Errorf("note %q", n)
	}
	if again := p.DisarmGit(); len(again) != 0 {
		t.Errorf("second DisarmGit removed %q", again)
	}
}

// TestHiddenInsideRootWithoutView: without a mount view (no user
// namespaces: Landlock alone) a hidden folder, the engine's, inside a
// writable root cannot be kept out (Landlock only allows): the start fails
// and says why, instead of leaving the user's shells' command files open
// to the model. Outside every writable root it is kept out by Landlock.
func TestHiddenInsideRootWithoutView(t *testing.T) {
	f := sandbox.Detect()
	if f.Landlock == 0 {
		t.Skip("no Landlock in this kernel")
	}
	f.Namespaces, f.NamespacesErr = false, nil
	work := t.TempDir()
	engine := filepath.Join(work, ".local", "share", "agentsh", "run")
	own := filepath.Join(engine, "p-1", "sh-1")
	write(t, filepath.Join(engine, "p-1", "sh-2", "a"), "the user's shell's next apply script\n")
	write(t, filepath.Join(own, "init"), "\n")
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
	conf, err := sandbox.ConfineHidingWith(p, f, []string{engine}, own)
	if err == nil {
		got, _ := runConfinedBy(t, conf, work, `echo pwned > "$1/p-1/sh-2/a" && echo wrote; echo end`, engine)
		conf.Close()
		t.Fatalf("confined without a view, the engine folder inside the workspace: %q", got)
	}
	want := "sandbox: the engine folder " + engine + " is inside the writable folder " + work +
		", which Landlock alone (no user namespaces) cannot keep it out of: set XDG_RUNTIME_DIR or XDG_DATA_HOME to a folder outside it"
	if err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
	// Outside the writable roots: Landlock keeps it out.
	outEngine := filepath.Join(outsideDir(t), "run")
	write(t, filepath.Join(outEngine, "p-1", "sh-2", "a"), "x\n")
	conf, err = sandbox.ConfineHidingWith(p, f, []string{outEngine}, filepath.Join(outEngine, "p-1", "sh-1"))
	if err != nil {
		t.Fatal(err)
	}
	defer conf.Close()
	if got, _ := runConfinedBy(t, conf, work, `{ echo pwned > "$1/p-1/sh-2/a"; } 2>/dev/null || echo refused`, outEngine); got != "refused\n" {
		t.Errorf("the engine folder outside the workspace: %q", got)
	}
}

// TestViewOtherTerminals: a terminal that is not the confined program's
// own (the user's, here one the test holds open) can be neither written
// to (drawing fake questions on the user's screen) nor read from (taking
// what the user types); one the program opens itself works.
func TestViewOtherTerminals(t *testing.T) {
	needView(t)
	master, slave, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}
	defer master.Close()
	defer slave.Close()
	work := t.TempDir()
	p := &sandbox.Policy{Mode: sandbox.WorkspaceWrite, Workdir: work}
	got, _ := runConfined(t, p, work, `export LC_ALL=C
echo INJECT > "$1" && echo wrote
read -r -t 1 line < "$1" && echo "read: $line"
python3 -c 'import os, pty; m, s = pty.openpty(); os.write(s, b"own\n"); print(os.read(m, 10).decode().strip())' 2>&1 || echo no-python
echo end`, slave.Name())
	if strings.Contains(got, "wrote") || strings.Contains(got, "read:") {
		t.Errorf("the confined program reached the user's terminal: %q", got)
	}
	if !strings.Contains(got, slave.Name()+": Read-only file system") {
		t.Errorf("writing the user's terminal: %q", got)
	}
	if !strings.Contains(got, "own\nend\n") && !strings.Contains(got, "no-python\nend\n") {
		t.Errorf("a terminal the program opened itself: %q", got)
	}
	// Nothing arrived on the user's side (a raw non-blocking read: the
	// master is a blocking *os.File).
	fd := int(master.Fd())
	if err := syscall.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 64)
	if n, _ := syscall.Read(fd, b); n > 0 {
		t.Errorf("the user's terminal received %q", b[:n])
	}
}

// TestViewOfNoOps: a view with nothing to bind or mask (read-only mode
// with no denied folder and no socket, as a user with an empty HOME has
// it) still makes the whole tree read-only: it once gave no mount
// namespace at all, and chmod outside worked.
func TestViewOfNoOps(t *testing.T) {
	needView(t)
	out := filepath.Join(outsideDir(t), "key")
	write(t, out, "k\n")
	got, _ := runGuarded(t, &guard.Sandbox{View: fsview.View{}}, t.TempDir(), `export LC_ALL=C; chmod 600 "$1" && echo chmod; echo end`, out)
	if want := "chmod: changing permissions of '" + out + "': Read-only file system\nend\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if st, err := os.Stat(out); err != nil || st.Mode().Perm() != 0o644 {
		t.Errorf("the file outside changed: %v %v", st.Mode(), err)
	}
}

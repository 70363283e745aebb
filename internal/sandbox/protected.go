package sandbox

// protectedNames are the names kept read-only at the top of every writable
// root, so a model cannot plant settings or hooks that run later outside
// the sandbox: the configuration of agentsh and of the other agents
// and editors that run commands from a project, and direnv's file.
var protectedNames = []string{".agentsh", ".claude", ".codex", ".vscode", ".envrc"}

// rcFiles are the user's shell start-up files (.bash_aliases: Debian's and
// Ubuntu's .bashrc source it; .zshenv: every zsh reads it, scripts too),
// and git's own configuration
// (which names programs git runs: core.fsmonitor, core.pager, hooks, …),
// kept read-only wherever they lie in HOME (they matter when HOME is inside
// a writable root).
var rcFiles = []string{".bashrc", ".bash_profile", ".bash_login", ".profile", ".bash_logout", ".bash_aliases",
	".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout", ".config/fish", ".inputrc",
	".gitconfig", ".config/git"}

// gitProtected are the parts of a repository's .git folder that make git
// run programs or read configuration; the rest (objects, refs, the index,
// HEAD, logs) stays writable so git add, commit and checkout work.
var gitProtected = []string{"config", "config.worktree", "commondir", "gitdir", "hooks", "info"}

// SocketEnv are the variables that name a socket or a display of a server
// outside the sandbox: a confined program does not get them (the view
// masks the sockets themselves).
var SocketEnv = []string{"SSH_AUTH_SOCK", "DBUS_SESSION_BUS_ADDRESS", "TMUX", "TMUX_PANE", "DISPLAY", "WAYLAND_DISPLAY", "DOCKER_HOST"}

package guard

// The guardian side: agentsh re-executes its own binary with envVar set, and
// this package's init() turns that process into a guardian before most of
// agentsh's packages have initialized: Go initializes, at each step, the
// first package in import-path order whose imports are done, and
// "agentsh/internal/guard" sorts before every standard and third-party
// package and every agentsh package that does not import it. Keep its
// imports few: whatever they pull in initializes first. It never returns to
// main.

import (
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"

	"agentsh/internal/fsview"
	"agentsh/internal/proc"
)

// Guardian descriptors: 0-2 are /dev/null, then the lifeline, the report
// pipe, and from firstChildFd on the child's descriptors 0..n-1.
const (
	lifelineFd   = 3
	reportFd     = 4
	firstChildFd = 5
)

// Guardian exit statuses; only exitSwept tells agentsh the sweep is done.
const (
	exitSwept = 0
	exitUsage = 2
	exitStart = 3
)

const prSetChildSubreaper = 36 // PR_SET_CHILD_SUBREAPER

// shedAfter is how long a guardian runs before it gives back the pages its
// start mapped (shedStartPages).
const shedAfter = 100 * time.Millisecond

func init() {
	if os.Getenv(envVar) != envValue {
		return
	}
	// A raw exit: no exit hooks, and no race-detector shutdown, which sleeps
	// a second at every exit with status 0 in a -race build.
	syscall.Exit(guardianMain(os.Args[1:]))
}

// guardianConfig is what agentsh passes on the guardian's command line.
type guardianConfig struct {
	files   int
	grace   time.Duration
	setsid  bool
	setctty bool
	marker  []byte
	cleanup []string
	ruleset int  // Landlock ruleset descriptor; -1 = none
	lo      bool // bring loopback up (a network namespace of its own)
	view    fsview.View
	dir     string // the program's working directory; "" = the guardian's
	path    string
	argv    []string
}

func parseGuardianArgs(args []string) (guardianConfig, bool) {
	c := guardianConfig{files: -1, ruleset: -1}
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch a {
		case "--":
			if len(args)-i < 3 || c.files < 0 {
				return c, false
			}
			c.path, c.argv = args[i+1], args[i+2:]
			return c, true
		case "-sid":
			c.setsid = true
			continue
		case "-ctty":
			c.setctty = true
			continue
		case "-lo":
			c.lo = true
			continue
		case "-view":
			// A view, even one of no ops: the tree is still made
			// read-only.
			if c.view == nil {
				c.view = fsview.View{}
			}
			continue
		}
		if i+1 >= len(args) {
			return c, false
		}
		i++
		v := args[i]
		var err error
		switch a {
		case "-n":
			c.files, err = strconv.Atoi(v)
		case "-grace":
			var ns int64
			ns, err = strconv.ParseInt(v, 10, 64)
			c.grace = time.Duration(ns)
		case "-mark":
			c.marker = []byte(v)
		case "-dir":
			c.dir = v
		case "-rm":
			c.cleanup = append(c.cleanup, v)
		case "-ll":
			c.ruleset, err = strconv.Atoi(v)
		case "-v":
			op, ok := fsview.ParseOp(v)
			if !ok {
				return c, false
			}
			c.view = append(c.view, op)
		default:
			return c, false
		}
		if err != nil {
			return c, false
		}
	}
	return c, false
}

// guardianMain starts the child, reaps everything that ends up below it
// and, once agentsh closes the lifeline (or dies), ends every process of the
// tree, removes the cleanup paths and exits.
func guardianMain(args []string) int {
	// Pins this goroutine to m0, the thread-group leader, for good (init
	// already runs there; this keeps it so whoever calls): the thread a
	// sandbox confines (forkConfined) must never be the leader, and
	// threads the runtime starts later are cloned from an unconfined one
	// (a locked thread hands thread creation to the template thread).
	runtime.LockOSThread()
	cfg, ok := parseGuardianArgs(args)
	if !ok {
		_, _ = os.Stderr.WriteString("agentsh: internal guardian mode, started with bad arguments\n")
		return exitUsage
	}
	report := os.NewFile(reportFd, "report")
	say := func(line string) { _, _ = report.WriteString(line + "\n") }
	// Neither pipe may reach the child: the lifeline must end with agentsh
	// alone, and the report pipe must end with the guardian.
	syscall.CloseOnExec(lifelineFd)
	syscall.CloseOnExec(reportFd)
	if _, _, e := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); e != 0 {
		say("X set child subreaper: " + e.Error())
		return exitStart
	}
	if cfg.ruleset >= 0 {
		syscall.CloseOnExec(cfg.ruleset)
	}
	joined := os.Getenv(joinEnv) != "" // setns_cgo.go joined, or ended the guardian
	if cfg.lo {
		if err := loopbackUp(); err != nil {
			say("X sandbox: bring loopback up: " + err.Error())
			return exitStart
		}
	}
	self, _ := proc.Stat(os.Getpid()) // only processes started after it can carry the marker

	chld := make(chan os.Signal, 1)
	signal.Notify(chld, syscall.SIGCHLD)
	term := make(chan os.Signal, 1)
	signal.Notify(term, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)

	files := make([]uintptr, cfg.files)
	for i := range files {
		files[i] = uintptr(firstChildFd + i)
		// ForkExec moves each to its place and drops every descriptor
		// marked close-on-exec; unmarked, the originals would leak too.
		syscall.CloseOnExec(firstChildFd + i)
	}
	sys := &syscall.SysProcAttr{Setsid: cfg.setsid, Setctty: cfg.setctty}
	if !cfg.setsid {
		sys.Setpgid = true // a `kill 0` of the child must not reach the guardian
	}
	env := os.Environ()
	kept := env[:0]
	for _, kv := range env {
		if !strings.HasPrefix(kv, envVar+"=") && !strings.HasPrefix(kv, joinEnv+"=") {
			kept = append(kept, kv)
		}
	}
	attr := &syscall.ProcAttr{Dir: cfg.dir, Env: kept, Files: files, Sys: sys}
	var child int
	var err error
	if cfg.view != nil {
		// Its other threads keep agentsh's view, and the program's
		// processes must not reach it through /proc/<guardian>/root
		// (Landlock refuses that too, where the kernel has it).
		_, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_DUMPABLE, 0, 0)
	}
	if cfg.ruleset >= 0 || cfg.lo || joined || cfg.view != nil {
		// A confined program gets its files and nothing else agentsh
		// inherited without close-on-exec: a folder's descriptor opened
		// outside the view would let it open paths past the view.
		cloexecFrom(firstChildFd + cfg.files)
		child, err = forkConfined(cfg.ruleset, cfg.view, cfg.path, cfg.argv, attr)
	} else {
		child, err = syscall.ForkExec(cfg.path, cfg.argv, attr)
	}
	if cfg.ruleset >= 0 {
		_ = syscall.Close(cfg.ruleset)
	}
	if ve, ok := err.(*fsview.Error); ok && ve.System() {
		say("N " + ve.Error())
		return exitStart
	}
	if err != nil {
		say("X fork/exec " + cfg.path + ": " + err.Error())
		return exitStart
	}
	say("P " + strconv.Itoa(child))
	// Only the child may hold its descriptors: a copy here would keep a
	// terminal's slave or a status pipe open after the child is gone.
	for i := range files {
		_ = syscall.Close(firstChildFd + i)
	}

	eof := make(chan struct{})
	go func() {
		lifeline := os.NewFile(lifelineFd, "lifeline")
		var b [64]byte
		for {
			if _, err := lifeline.Read(b[:]); err != nil {
				close(eof)
				return
			}
		}
	}()

	reported := false
	reap := func() {
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
			if err == syscall.EINTR {
				continue
			}
			if err != nil || pid <= 0 {
				return
			}
			if pid == child && !reported {
				reported = true
				code := ws.ExitStatus()
				if ws.Signaled() {
					code = 128 + int(ws.Signal())
				}
				say("E " + strconv.Itoa(code))
			}
		}
	}
	reap()
	// A guardian that outlives its start-up gives back what it mapped
	// then; a short one (a snapshot's rc, a quick job) does not pay for it.
	shed := time.NewTimer(shedAfter)
	defer shed.Stop()
wait:
	for {
		select {
		case <-shed.C:
			shedStartPages()
		case <-chld:
			reap()
		case <-term:
			break wait
		case <-eof:
			break wait
		}
	}
	proc.KillDescendants(cfg.marker, self.Start, cfg.grace)
	reap()
	for _, p := range cfg.cleanup {
		_ = os.RemoveAll(p)
	}
	return exitSwept
}

const (
	sysCloseRange     = 436 // SYS_CLOSE_RANGE (same number on every architecture)
	closeRangeCloexec = 1 << 2
)

// cloexecFrom marks every descriptor from fd on close-on-exec: at once
// with close_range (Linux 5.11), else one by one as /proc lists them.
func cloexecFrom(fd int) {
	if _, _, e := syscall.RawSyscall(sysCloseRange, uintptr(fd), ^uintptr(0)>>32, closeRangeCloexec); e == 0 {
		return
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return
	}
	for _, e := range ents {
		if n, err := strconv.Atoi(e.Name()); err == nil && n >= fd {
			syscall.CloseOnExec(n)
		}
	}
}

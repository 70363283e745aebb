package guard

// The guardian's side of a sandbox (Cmd.Sandbox): bring loopback up in its
// network namespace, and confine the one thread that forks the program.
// Credentials, no_new_privs and a Landlock domain belong to a thread, and a
// child takes those of the thread that forked it; the guardian's other
// threads, m0 above all, stay unconfined for the sweep and the cleanup.
// Only syscall here: this runs before most of agentsh initializes.

import (
	"runtime"
	"syscall"
	"unsafe"

	"agentsh/internal/fsview"
)

const (
	capNetAdmin = 12 // CAP_NET_ADMIN
	capSysAdmin = 21 // CAP_SYS_ADMIN

	prSetNoNewPrivs     = 38 // PR_SET_NO_NEW_PRIVS
	prCapbsetDrop       = 24 // PR_CAPBSET_DROP
	prCapAmbient        = 47 // PR_CAP_AMBIENT
	prCapAmbientClrAll  = 4  // PR_CAP_AMBIENT_CLEAR_ALL
	linuxCapVersion3    = 0x20080522
	sysLandlockRestrict = 446 // SYS_LANDLOCK_RESTRICT_SELF (same number on every architecture)
	siocsifflags        = 0x8914
	iffUp               = 0x1
	iffLoopback         = 0x8
	iffRunning          = 0x40
)

// loopbackUp brings "lo" up, as `ip link set lo up` does.
func loopbackUp() error {
	s, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_DGRAM|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer syscall.Close(s)
	var ifr struct {
		name  [16]byte
		flags uint16
		_     [22]byte
	}
	copy(ifr.name[:], "lo")
	ifr.flags = iffUp | iffLoopback | iffRunning
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(s), siocsifflags, uintptr(unsafe.Pointer(&ifr))); e != 0 {
		return e
	}
	return nil
}

type capHeader struct {
	version uint32
	pid     int32
}

type capData struct{ effective, permitted, inheritable uint32 }

// confineThread confines the calling thread, which must be locked to its
// goroutine and never unlocked: no_new_privs, no ambient or inheritable
// capabilities, an empty bounding set when it is root (a root shell in its
// own user namespace would otherwise hold every capability there), then
// the Landlock ruleset (fd < 0: none).
func confineThread(ruleset int) (string, error) {
	if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prSetNoNewPrivs, 1, 0, 0, 0, 0); e != 0 {
		return "no_new_privs", e
	}
	_, _, _ = syscall.RawSyscall6(syscall.SYS_PRCTL, prCapAmbient, prCapAmbientClrAll, 0, 0, 0, 0)
	hdr := capHeader{version: linuxCapVersion3}
	var data [2]capData
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPGET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return "capget", e
	}
	data[0].inheritable, data[1].inheritable = 0, 0
	if _, _, e := syscall.RawSyscall(syscall.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return "capset", e
	}
	if syscall.Geteuid() == 0 {
		for c := uintptr(0); c < 64; c++ {
			if _, _, e := syscall.RawSyscall6(syscall.SYS_PRCTL, prCapbsetDrop, c, 0, 0, 0, 0); e == syscall.EINVAL {
				break // past the last capability
			} else if e != 0 {
				return "drop the capability bounding set", e
			}
		}
	}
	if ruleset >= 0 {
		if _, _, e := syscall.RawSyscall(sysLandlockRestrict, uintptr(ruleset), 0, 0); e != 0 {
			return "landlock_restrict_self", e
		}
	}
	return "", nil
}

// confineError names the step of the confinement that failed.
type confineError struct {
	step string
	err  error
}

func (e confineError) Error() string { return "sandbox: " + e.step + ": " + e.err.Error() }

// forkConfined starts the program from a new thread that builds the view
// (when there is one) and that confineThread restricts. The thread ends
// with its goroutine (it stays locked), so no confined thread, and no
// thread in the view's mount namespace, is left in the guardian.
func forkConfined(ruleset int, view fsview.View, path string, argv []string, attr *syscall.ProcAttr) (int, error) {
	type result struct {
		pid int
		err error
	}
	done := make(chan result, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is confined
		if view != nil {
			if err := fsview.Apply(view); err != nil {
				done <- result{0, err}
				return
			}
		}
		if what, err := confineThread(ruleset); err != nil {
			done <- result{0, confineError{what, err}}
			return
		}
		pid, err := syscall.ForkExec(path, argv, attr)
		done <- result{pid, err}
	}()
	r := <-done
	return r.pid, r.err
}

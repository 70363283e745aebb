//go:build linux && cgo

package guard

// Joining a user namespace (setns) needs a single-threaded process, which
// a Go program is only before its runtime starts: a guardian told to join
// a sandbox's namespaces (joinEnv) does so from this constructor, as runc's
// nsexec does. On failure it reports a "J" line and exits, and the caller
// makes new namespaces instead.

/*
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// Go reads its environment from the process's initial stack, which setenv
// does not change: a failure is reported on the guardian's report pipe
// (fd 4, as a "J" line agentsh reads as its first), and the guardian ends.
__attribute__((constructor)) static void agentsh_guard_join(void) {
	const char *v = getenv("AGENTSH_GUARD_JOIN");
	if (v == NULL) {
		return;
	}
	int u = -1, n = -1;
	const char *what = "user";
	int err = 0;
	// "user,net", or "user" alone (a sandbox with the network on).
	if (sscanf(v, "%d,%d", &u, &n) < 1) {
		what = "descriptors of the";
		err = EINVAL;
	} else if (setns(u, CLONE_NEWUSER) != 0) {
		err = errno;
	} else if (n >= 0 && setns(n, CLONE_NEWNET) != 0) {
		what = "network";
		err = errno;
	}
	if (u >= 0) {
		close(u);
	}
	if (n >= 0) {
		close(n);
	}
	if (err != 0) {
		char buf[160];
		int len = snprintf(buf, sizeof buf, "J join the sandbox's %s namespace: %s\n", what, strerror(err));
		if (len > 0) {
			ssize_t w = write(4, buf, (size_t)len < sizeof buf ? (size_t)len : sizeof buf - 1);
			(void)w;
		}
		_exit(3);
	}
}
*/
import "C"

// canJoin: this build joins shared namespaces (the constructor above).
const canJoin = true

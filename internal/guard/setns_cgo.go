//go:build linux && cgo

package guard

// Joining a user namespace (setns) needs a single-threaded process, which
// a Go program is only before its runtime starts: a guardian told to join
// a sandbox's namespaces (joinEnv) does so from this constructor, as runc's
// nsexec does. On failure it leaves joinErrEnv set for the guardian to
// report, and the caller makes new namespaces instead.

/*
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

__attribute__((constructor)) static void agentsh_guard_join(void) {
	const char *v = getenv("AGENTSH_GUARD_JOIN");
	if (v == NULL) {
		return;
	}
	int u = -1, n = -1;
	const char *what = "parse";
	int err = EINVAL;
	if (sscanf(v, "%d,%d", &u, &n) == 2) {
		what = "user";
		err = 0;
		if (setns(u, CLONE_NEWUSER) != 0) {
			err = errno;
		} else {
			what = "network";
			if (setns(n, CLONE_NEWNET) != 0) {
				err = errno;
			}
		}
		close(u);
		close(n);
	}
	unsetenv("AGENTSH_GUARD_JOIN");
	if (err == 0) {
		setenv("AGENTSH_GUARD_JOINED", "1", 1);
	} else {
		char buf[128];
		snprintf(buf, sizeof buf, "join the %s namespace: %s", what, strerror(err));
		setenv("AGENTSH_GUARD_JOIN_ERR", buf, 1);
	}
}
*/
import "C"

// canJoin: this build joins shared namespaces (the constructor above).
const canJoin = true

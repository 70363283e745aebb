package rpc

import (
	"regexp"
	"strings"
	"testing"
)

// TestBashClosingEveryDescriptor: an RPC client's bash that
// closes every fd from 3 to 255 answers with its output and exit status,
// without the engine's status line (it used to hang, and every later call
// was refused as "already running"); the next call runs, with the state
// the client's commands made.
func TestBashClosingEveryDescriptor(t *testing.T) {
	c, _ := startJobs(t)
	c.send(`{"id":"b0","type":"bash","command":"export RPCTEST_KEPT=yes"}`)
	if r := c.response("b0"); r["success"] != true {
		t.Fatalf("b0: %v", r)
	}
	c.send(`{"id":"b1","type":"bash","command":"echo before; for fd in $(seq 3 255); do eval \"exec $fd>&-\"; done; echo after; (exit 4)"}`)
	r := c.response("b1")
	d, _ := r["data"].(map[string]any)
	out, _ := d["output"].(string)
	if r["success"] != true || !strings.HasPrefix(out, "before\nafter\n") || d["exitCode"] != float64(4) ||
		regexp.MustCompile(`(?m)^[SE] [A-Za-z0-9]{10}`).MatchString(out) {
		t.Fatalf("b1: %v", r)
	}
	c.send(`{"id":"b2","type":"bash","command":"echo $RPCTEST_KEPT"}`)
	if d, _ := c.response("b2")["data"].(map[string]any); d["output"] != "yes\n" || d["exitCode"] != float64(0) {
		t.Fatalf("b2: %v", d)
	}
}

package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"agentsh/internal/proctest"
)

// TestPrintModeHTTPServerJob: the model starts `python3 -m http.server`
// with background: true, curls it in its next call, reads the server's log
// line with job_output and kills it with job_kill: the real binary, the
// fake model, nothing left.
func TestPrintModeHTTPServerJob(t *testing.T) {
	t.Parallel()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("python3 not installed: the http.server test needs it")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	s := newSandbox(t)
	writeFile(t, filepath.Join(s.work, "hello.txt"), "hello from the job\n")
	// In the default sandbox (network off) the job and the next call share
	// one network namespace: the server is reachable, the host is not.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	server, _ := json.Marshal(map[string]any{"command": py + " -u -m http.server --bind 127.0.0.1 " + port, "background": true})
	fetch, _ := json.Marshal(map[string]any{"command": fmt.Sprintf(
		"curl -s --retry 50 --retry-connrefused --retry-delay 0 --max-time 20 http://127.0.0.1:%s/hello.txt", port)})
	var reads atomic.Int32
	var self atomic.Pointer[sseServer]
	last := func(n int) string { return lastToolResult(self.Load().Request(t, n).Body) }
	srv := newSSEServer(t, func(n int, w sseWriter) {
		switch {
		case n == 0:
			w.bash("call_server", string(server))
		case n == 1:
			w.bash("call_curl", string(fetch))
		case strings.HasPrefix(last(n), "Job 1 was killed."):
			w.answer("served and stopped")
		case n >= 2 && reads.Load() < 20 && !strings.Contains(last(n), `"GET /hello.txt HTTP/1.1" 200`):
			// The log line is printed as the request is served; read
			// until it is there (the hang guard is the count).
			reads.Add(1)
			w.tool(fmt.Sprintf("call_out_%d", n), "job_output", `{"id": "1", "wait_seconds": 0.5}`)
		default:
			w.tool("call_kill", "job_kill", `{"id": 1}`)
		}
	})
	self.Store(srv)
	r := s.runIn(nil, srv.env(), "-p", "serve the folder and fetch hello.txt", "--model", "openai/test")
	if r.code != 0 || r.stdout != "served and stopped\n" {
		t.Fatalf("%+v", r)
	}
	reqs := srv.requests()
	if got := lastToolResult(reqs[1]); !strings.HasPrefix(got, "Started job 1: ") {
		t.Errorf("background result %q", got)
	}
	if got := lastToolResult(reqs[2]); got != "hello from the job\n" {
		t.Errorf("curl result %q", got)
	}
	if reads.Load() >= 20 {
		for i, q := range reqs {
			t.Logf("request %d: %q", i, lastToolResult(q))
		}
		t.Errorf("job_output never showed the request's log line")
	}
	if strings.Contains(r.stderr, "stopping") {
		t.Errorf("the job was killed by the model, yet agentsh stopped jobs at exit: %q", r.stderr)
	}
	if left := proctest.WithArg(port); len(left) != 0 {
		t.Errorf("the server survived job_kill: %v", left)
	}
}

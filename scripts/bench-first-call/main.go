// Command bench-first-call measures, side by side, what the first bash call
// of a run costs whole agentsh binaries: it serves a fake OpenAI
// model, runs each binary in turn (the order alternating each round), each
// with a private HOME, and prints medians.
//
//	go run ./scripts/bench-first-call [-n 20] [-think 300ms] OLD NEW...
//	    `-p` with one bash call (echo hello): start -> first model request,
//	    the first bash call (the end of the model's tool call -> the next
//	    request), whole run. -think is the model's time before its call.
//	go run ./scripts/bench-first-call -mode exec OLD NEW...
//	    `agentsh exec -- true`, whole run.
//	go run ./scripts/bench-first-call -mode mem [-cmd 'sleep 0.3; seq 1 3000000'] OLD NEW...
//	    the process tree of `agentsh exec -- CMD` (agentsh, its guardians,
//	    bash, the command) sampled every 5 ms while the command's last
//	    program runs: the max of the summed Rss, Pss and Private
//	    (smaps_rollup), and an idle guardian's own memory 1.5 s into
//	    `agentsh exec -- 'sleep 4'`.
//
// Copy the binaries the same way (cp) before comparing memory: a binary
// the linker just wrote sits in the page cache in large folios, which map
// more per fault.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

var (
	think = flag.Duration("think", 0, "the model's time before its tool call")
	mu    sync.Mutex
	marks []time.Time // first request, tool call sent, second request
)

func mark() {
	mu.Lock()
	marks = append(marks, time.Now())
	mu.Unlock()
}

func chunk(w io.Writer, choices string) {
	fmt.Fprintf(w, "data: %s\n\n", `{"id":"x","object":"chat.completion.chunk","created":1700000000,"model":"fake","choices":`+choices+`}`)
	w.(http.Flusher).Flush()
}

// serve answers the first request with a bash call and the next with text.
func serve(w http.ResponseWriter, r *http.Request) {
	if strings.HasSuffix(r.URL.Path, "/models") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"fake-model","object":"model"}]}`)
		return
	}
	body, _ := io.ReadAll(r.Body)
	mark()
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	if bytes.Contains(body, []byte(`"role":"tool"`)) {
		chunk(w, `[{"index":0,"delta":{"role":"assistant","content":"It printed hello."},"finish_reason":null}]`)
		chunk(w, `[{"index":0,"delta":{},"finish_reason":"stop"}]`)
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	time.Sleep(*think)
	chunk(w, `[{"index":0,"delta":{"role":"assistant","tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":"{\"command\":\"echo hello\"}"}}]},"finish_reason":null}]`)
	chunk(w, `[{"index":0,"delta":{},"finish_reason":"tool_calls"}]`)
	fmt.Fprint(w, "data: [DONE]\n\n")
	w.(http.Flusher).Flush()
	mark()
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	if len(s) == 0 {
		return 0
	}
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// marked lists the processes whose environment holds kv.
func marked(kv string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/environ")
		if err == nil && bytes.Contains(append([]byte{0}, b...), []byte("\x00"+kv+"\x00")) {
			out = append(out, e.Name())
		}
	}
	return out
}

// rollup reads a process's smaps_rollup (kB) and its name.
func rollup(pid string) (map[string]int, string, bool) {
	b, err := os.ReadFile("/proc/" + pid + "/smaps_rollup")
	if err != nil {
		return nil, "", false
	}
	comm, _ := os.ReadFile("/proc/" + pid + "/comm")
	m := map[string]int{}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && strings.HasSuffix(f[0], ":") {
			m[strings.TrimSuffix(f[0], ":")], _ = strconv.Atoi(f[1])
		}
	}
	m["Private"] = m["Private_Clean"] + m["Private_Dirty"]
	return m, strings.TrimSpace(string(comm)), true
}

func main() {
	n := flag.Int("n", 20, "rounds")
	mode := flag.String("mode", "p", "p, exec or mem")
	memCmd := flag.String("cmd", "sleep 0.3; seq 1 3000000", "mem: the command (about 21 MB of output)")
	flag.Parse()
	bins := flag.Args()
	for i, b := range bins {
		if abs, err := filepath.Abs(b); err == nil {
			bins[i] = abs
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go http.Serve(ln, http.HandlerFunc(serve))
	base := "http://" + ln.Addr().String() + "/v1"
	tmp, err := os.MkdirTemp("", "bench-first-call-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(tmp)
	type figures struct{ first, call, wall, rss, pss, priv, gRss, gPss, gPriv []float64 }
	res := make([]figures, len(bins))
	for round := 0; round < *n; round++ {
		for k := range bins {
			j := k
			if round%2 == 1 {
				j = len(bins) - 1 - k
			}
			home := filepath.Join(tmp, strconv.Itoa(j))
			os.MkdirAll(home, 0o700)
			kv := fmt.Sprintf("BENCH_FIRST_CALL=%d-%d-%d", os.Getpid(), round, j)
			env := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "OPENAI_BASE_URL=" + base, "OPENAI_API_KEY=test", "TERM=dumb", kv}
			var cmd *exec.Cmd
			switch *mode {
			case "exec":
				cmd = exec.Command(bins[j], "exec", "--", "true")
			case "mem":
				cmd = exec.Command(bins[j], "exec", "--", *memCmd)
			default:
				cmd = exec.Command(bins[j], "-p", "Say hello with bash, then tell me what it printed.", "--model", "openai/fake-model")
			}
			cmd.Dir, cmd.Env = home, env
			mu.Lock()
			marks = nil
			mu.Unlock()
			if *mode == "mem" {
				measureTree(cmd, kv, &res[j].rss, &res[j].pss, &res[j].priv)
				g := exec.Command(bins[j], "exec", "--", "sleep 4")
				g.Dir, g.Env = home, env
				measureGuardian(g, kv, &res[j].gRss, &res[j].gPss, &res[j].gPriv)
				continue
			}
			t0 := time.Now()
			out, err := cmd.CombinedOutput()
			res[j].wall = append(res[j].wall, ms(time.Since(t0)))
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n%s", bins[j], err, out)
				os.Exit(1)
			}
			if *mode == "p" {
				mu.Lock()
				m := append([]time.Time(nil), marks...)
				mu.Unlock()
				if len(m) != 3 || !bytes.Contains(out, []byte("It printed hello.")) {
					fmt.Fprintf(os.Stderr, "%s: %d requests\n%s", bins[j], len(m), out)
					os.Exit(1)
				}
				res[j].first = append(res[j].first, ms(m[0].Sub(t0)))
				res[j].call = append(res[j].call, ms(m[2].Sub(m[1])))
			}
		}
	}
	for j, b := range bins {
		r := res[j]
		switch *mode {
		case "p":
			fmt.Printf("%-24s start->first request %7.2f ms   first bash call %7.2f ms   run %7.2f ms   (medians of %d)\n",
				filepath.Base(b), median(r.first), median(r.call), median(r.wall), len(r.wall))
		case "exec":
			fmt.Printf("%-24s exec -- true %7.2f ms (median of %d)\n", filepath.Base(b), median(r.wall), len(r.wall))
		case "mem":
			fmt.Printf("%-24s tree max Rss %5.1f Pss %5.1f Private %5.1f MB; idle guardian Rss %4.1f Pss %4.1f Private %4.1f MB (medians of %d)\n",
				filepath.Base(b), median(r.rss)/1024, median(r.pss)/1024, median(r.priv)/1024,
				median(r.gRss)/1024, median(r.gPss)/1024, median(r.gPriv)/1024, len(r.rss))
		}
	}
}

// measureTree runs cmd and samples the tree while the command's last
// program (its name: the last word's first field) runs.
func measureTree(cmd *exec.Cmd, kv string, rss, pss, priv *[]float64) {
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	parts := strings.Split(cmd.Args[len(cmd.Args)-1], ";")
	prog := ""
	if f := strings.Fields(parts[len(parts)-1]); len(f) > 0 {
		prog = f[0]
	}
	maxR, maxP, maxV := 0, 0, 0
	for {
		select {
		case <-done:
			*rss, *pss, *priv = append(*rss, float64(maxR)), append(*pss, float64(maxP)), append(*priv, float64(maxV))
			return
		default:
		}
		r, p, v, seen := 0, 0, 0, false
		for _, pid := range marked(kv) {
			m, comm, ok := rollup(pid)
			if !ok {
				continue
			}
			seen = seen || comm == prog
			r, p, v = r+m["Rss"], p+m["Pss"], v+m["Private"]
		}
		if seen {
			maxR, maxP, maxV = max(maxR, r), max(maxP, p), max(maxV, v)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// measureGuardian runs cmd and reads its guardian's memory 1.5 s in.
func measureGuardian(cmd *exec.Cmd, kv string, rss, pss, priv *[]float64) {
	if err := cmd.Start(); err != nil {
		panic(err)
	}
	time.Sleep(1500 * time.Millisecond)
	for _, pid := range marked(kv) {
		if b, _ := os.ReadFile("/proc/" + pid + "/cmdline"); bytes.HasPrefix(b, []byte("agentsh-guard\x00")) {
			if m, _, ok := rollup(pid); ok {
				*rss, *pss, *priv = append(*rss, float64(m["Rss"])), append(*pss, float64(m["Pss"])), append(*priv, float64(m["Private"]))
			}
		}
	}
	cmd.Wait()
}

package compat

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"
)

// Line is one line of a transcript: a command sent to the agent ("in") or a
// line it wrote on stdout ("out"). Data is the line's JSON, or a JSON string
// holding the raw text when the agent wrote something that is not JSON.
type Line struct {
	Dir  string          `json:"dir"`
	Data json.RawMessage `json:"data"`
}

// Step is one command of the RPC script and what ends it.
type Step struct {
	// Send is the command line; empty for a step that only waits.
	Send string
	// Until are the ids whose responses end the step; AgentEnd also waits
	// for an agent_end event.
	Until    []string
	AgentEnd bool
	// Settle is how long to read before the step counts as sent, for a
	// command that must be running before the next one (bash before
	// abort_bash). It is a driver pause, not an assertion.
	Settle time.Duration
	// Timeout bounds the wait for the step's end; a step that times out is
	// recorded as far as it got.
	Timeout time.Duration
}

// RPCScript is the fixed command script of the golden RPC transcripts.
var RPCScript = []Step{
	{Send: `{"id":"c1","type":"prompt","message":` + quote(Prompt) + `}`, Until: []string{"c1"}, AgentEnd: true, Timeout: 90 * time.Second},
	{Send: `{"id":"c2","type":"bash","command":"echo hi"}`, Until: []string{"c2"}, Timeout: 30 * time.Second},
	{Send: `{"id":"c3","type":"bash","command":"echo started; sleep 30; echo late"}`, Settle: 1500 * time.Millisecond},
	{Send: `{"id":"c4","type":"abort_bash"}`, Until: []string{"c3", "c4"}, Timeout: 30 * time.Second},
	{Send: `{"id":"c5","type":"get_messages"}`, Until: []string{"c5"}, Timeout: 15 * time.Second},
	{Send: `{"id":"c6","type":"get_session_stats"}`, Until: []string{"c6"}, Timeout: 15 * time.Second},
	{Send: `{"id":"c7","type":"get_state"}`, Until: []string{"c7"}, Timeout: 15 * time.Second},
	{Send: `{"id":"c8","type":"frobnicate"}`, Until: []string{"c8"}, Timeout: 15 * time.Second},
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// proc is a started agent with its stdout read line by line.
type proc struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *os.File
	lines chan []byte
}

func start(cmd *exec.Cmd) (*proc, error) {
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, fmt.Errorf("stdin pipe: %w", err)
	}
	// An *os.File as stdout, so that Wait returns when the agent exits even
	// if a process it left behind still holds the pipe.
	out, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stdout pipe: %w", err)
	}
	cmd.Stdout = w
	err = cmd.Start()
	w.Close()
	if err != nil {
		out.Close()
		return nil, fmt.Errorf("start %s: %w", cmd.Path, err)
	}
	p := &proc{cmd: cmd, in: in, out: out, lines: make(chan []byte, 1024)}
	go func() {
		defer close(p.lines)
		r := bufio.NewReaderSize(out, 1<<20)
		for {
			b, err := r.ReadBytes('\n')
			if b = bytes.TrimRight(b, "\r\n"); len(b) > 0 {
				p.lines <- b
			}
			if err != nil {
				return
			}
		}
	}()
	return p, nil
}

func outLine(b []byte) Line {
	if json.Valid(b) {
		return Line{Dir: "out", Data: append(json.RawMessage(nil), b...)}
	}
	s, _ := json.Marshal(string(b))
	return Line{Dir: "out", Data: s}
}

// finish closes stdin and waits for the agent to exit, killing it after
// grace; it returns the lines written meanwhile.
func (p *proc) finish(grace time.Duration) []Line {
	p.in.Close()
	var got []Line
	timer := time.NewTimer(grace)
	defer timer.Stop()
	for {
		select {
		case b, ok := <-p.lines:
			if !ok {
				p.cmd.Wait()
				return got
			}
			got = append(got, outLine(b))
		case <-timer.C:
			p.cmd.Process.Kill()
			p.cmd.Wait()
			p.out.Close()
			for b := range p.lines {
				got = append(got, outLine(b))
			}
			return got
		}
	}
}

// RunRPC starts cmd (an agent in RPC mode), waits for its ready line, runs
// script and returns the transcript. A step that does not end in time is
// noted in the returned problems and the script goes on; the transcript is
// complete as far as the agent answered.
func RunRPC(ctx context.Context, cmd *exec.Cmd, script []Step) ([]Line, []string, error) {
	p, err := start(cmd)
	if err != nil {
		return nil, nil, err
	}
	var tr []Line
	var problems []string
	read := func(d time.Duration, done func(map[string]any) bool) bool {
		timer := time.NewTimer(d)
		defer timer.Stop()
		for {
			select {
			case b, ok := <-p.lines:
				if !ok {
					return false
				}
				tr = append(tr, outLine(b))
				var m map[string]any
				if json.Unmarshal(b, &m) == nil && done != nil && done(m) {
					return true
				}
			case <-timer.C:
				return done == nil
			case <-ctx.Done():
				return false
			}
		}
	}
	if !read(60*time.Second, func(m map[string]any) bool { return m["type"] == "ready" }) {
		tr = append(tr, p.finish(5*time.Second)...)
		return tr, nil, fmt.Errorf("no ready line from %s: %s", cmd.Path, summary(tr))
	}
	for _, st := range script {
		if st.Send != "" {
			tr = append(tr, Line{Dir: "in", Data: json.RawMessage(st.Send)})
			if _, err := io.WriteString(p.in, st.Send+"\n"); err != nil {
				problems = append(problems, fmt.Sprintf("send %s: %v", st.Send, err))
				break
			}
		}
		if st.Settle > 0 {
			read(st.Settle, nil)
		}
		if len(st.Until) == 0 && !st.AgentEnd {
			continue
		}
		waiting := map[string]bool{}
		for _, id := range st.Until {
			waiting[id] = true
		}
		var sentType string
		var sent map[string]any
		if json.Unmarshal([]byte(st.Send), &sent) == nil {
			sentType, _ = sent["type"].(string)
		}
		needEnd := st.AgentEnd
		ok := read(st.Timeout, func(m map[string]any) bool {
			if m["type"] == "agent_end" {
				needEnd = false
			}
			if m["type"] == "response" {
				if id, ok := m["id"].(string); ok {
					delete(waiting, id)
				} else if m["command"] == sentType || m["command"] == nil {
					// A response without an id (an unknown command's) ends
					// the step of the command it names.
					delete(waiting, st.Until[len(st.Until)-1])
				}
			}
			return len(waiting) == 0 && !needEnd
		})
		if !ok {
			problems = append(problems, fmt.Sprintf("step %s: no end within %s (waiting for %v, agent_end pending %v)", st.Send, st.Timeout, keys(waiting), needEnd))
			if ctx.Err() != nil {
				break
			}
		}
	}
	tr = append(tr, p.finish(15*time.Second)...)
	return tr, problems, nil
}

// RunJSON runs cmd (an agent in JSON mode with its prompt) to its end and
// returns its stdout lines.
func RunJSON(ctx context.Context, cmd *exec.Cmd) ([]Line, error) {
	p, err := start(cmd)
	if err != nil {
		return nil, err
	}
	p.in.Close()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	var tr []Line
	var werr error
	select {
	case werr = <-exited:
	case <-ctx.Done():
		p.cmd.Process.Kill()
		<-exited
		werr = ctx.Err()
	}
	// What the agent wrote before it exited is in the pipe; a process it
	// left behind may keep the pipe open, so the rest is read with a bound.
	timer := time.NewTimer(3 * time.Second)
	defer timer.Stop()
	for {
		select {
		case b, ok := <-p.lines:
			if !ok {
				if werr != nil {
					return tr, fmt.Errorf("%s: %w", cmd.Path, werr)
				}
				return tr, nil
			}
			tr = append(tr, outLine(b))
		case <-timer.C:
			p.out.Close()
			timer.Reset(time.Hour)
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

func summary(tr []Line) string {
	var b strings.Builder
	for i, l := range tr {
		if i == 5 {
			b.WriteString(" …")
			break
		}
		b.Write(l.Data)
		b.WriteString(" ")
	}
	return b.String()
}

// WriteTranscript writes tr as JSON lines to path.
func WriteTranscript(path string, tr []Line) error {
	var b bytes.Buffer
	for _, l := range tr {
		j, err := json.Marshal(l)
		if err != nil {
			return fmt.Errorf("encode transcript line: %w", err)
		}
		b.Write(j)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return fmt.Errorf("write transcript: %w", err)
	}
	return nil
}

// ReadTranscript reads a transcript written by WriteTranscript.
func ReadTranscript(path string) ([]Line, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read transcript: %w", err)
	}
	var tr []Line
	for i, s := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(s)) == 0 {
			continue
		}
		var l Line
		if err := json.Unmarshal(s, &l); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i+1, err)
		}
		tr = append(tr, l)
	}
	return tr, nil
}

package rpc

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strings"
	"testing"

	"agentsh/internal/agent"
	"agentsh/internal/bash"
	"agentsh/internal/fakemodel"
	"agentsh/internal/llm"
	"agentsh/internal/tools"
)

// BenchmarkRPCPrompt is one prompt over RPC against the fake model: a bash
// tool call (`true`), then an answer streamed in 200 pieces of 50 bytes.
// It reports the bytes of events written per prompt (out-B/op): what a
// client reads, which the reference's shapes (a snapshot of the answer so
// far in every message_update) make grow with the answer's length squared.
func BenchmarkRPCPrompt(b *testing.B) {
	piece := strings.Repeat("x", 49) + " "
	srv := fakemodel.New(b, func(n int, w *fakemodel.Writer) {
		if n%2 == 0 {
			w.Bash(fmt.Sprintf("call_%d", n), `{"command":"true"}`)
			return
		}
		for range 200 {
			w.Text(piece)
		}
		w.Finish("stop")
	})
	exec := bash.NewExecutor()
	b.Cleanup(exec.Close)
	dir := b.TempDir()
	reg, err := tools.NewRegistry(tools.NewBash(&bash.Tool{Executor: exec}, func() bash.ToolContext {
		return bash.ToolContext{Cwd: dir}
	}))
	if err != nil {
		b.Fatal(err)
	}
	cfg := Config{
		NewSession: func() (*agent.AgentSession, error) {
			return agent.New(dir, nil, exec, bash.ShellConfig{})
		},
		Models: agent.ModelsOf(llm.NewOpenAI(llm.OpenAIConfig{Name: "openai", BaseURL: srv.OpenAIBaseURL(), APIKey: "k"}), "fake-model"),
		Tools:  reg,
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() { _ = Serve(context.Background(), inR, outW, cfg); outW.Close() }()
	r := bufio.NewReaderSize(outR, 1<<20)
	if _, err := r.ReadBytes('\n'); err != nil { // ready
		b.Fatal(err)
	}
	var total int64
	b.ResetTimer()
	for i := range b.N {
		fmt.Fprintf(inW, `{"id":"p%d","type":"prompt","message":"go"}`+"\n", i)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			total += int64(len(line))
			if strings.HasPrefix(string(line), `{"type":"agent_end"`) {
				break
			}
		}
		b.StopTimer()
		fmt.Fprintf(inW, `{"id":"n%d","type":"new_session"}`+"\n", i)
		for {
			line, err := r.ReadBytes('\n')
			if err != nil {
				b.Fatal(err)
			}
			if strings.Contains(string(line), `"command":"new_session"`) {
				break
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(total)/float64(b.N), "out-B/op")
	inW.Close()
}

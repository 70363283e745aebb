package session

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// BenchmarkLoadLargeSession loads a generated session file of
// AGENTSH_BENCH_SESSION_MB megabytes (skipped when unset): a user prompt, a
// 5 KB answer and a 50 KB tool result, again and again. Run the compiled
// test binary under /usr/bin/time -v for the peak RSS (docs/BENCHMARKS.md):
//
//	go test -c -o /tmp/session.test ./internal/session
//	AGENTSH_BENCH_SESSION_MB=1024 /usr/bin/time -v /tmp/session.test -test.run '^$' -test.bench LoadLargeSession -test.benchtime 1x
func BenchmarkLoadLargeSession(b *testing.B) {
	mb, _ := strconv.Atoi(os.Getenv("AGENTSH_BENCH_SESSION_MB"))
	if mb <= 0 {
		b.Skip("AGENTSH_BENCH_SESSION_MB not set")
	}
	dir := b.TempDir()
	st, err := CreateIn(dir, "/w")
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range []Message{
		&UserMessage{Text: strings.Repeat("u", 1024)},
		&AssistantMessage{Text: strings.Repeat("a", 5<<10), ToolCalls: []ToolCall{{ID: "c1", Name: "bash"}}},
		&ToolResultMessage{ToolCallID: "c1", ToolName: "bash", Content: strings.Repeat("line of output\n", 50<<10/15)},
	} {
		if err := st.Append(m); err != nil {
			b.Fatal(err)
		}
	}
	path := st.Path()
	st.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	header, entries, _ := strings.Cut(string(data), "\n")
	big := filepath.Join(dir, "big.jsonl")
	f, err := os.Create(big)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(header + "\n")
	for n := 0; n < mb<<20; n += len(entries) {
		w.WriteString(entries)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	runtime.GC()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		s, _, err := Load(big)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(len(s.Messages)), "messages")
	}
}

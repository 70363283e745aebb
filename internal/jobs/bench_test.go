package jobs

import (
	"context"
	"strings"
	"testing"
	"time"
)

// BenchmarkStartToJob: from Start to a running job whose command has
// printed its first output (the shell, its guardian and the terminal set up).
func BenchmarkStartToJob(b *testing.B) {
	m := newManager(b)
	s := spec(b, "echo ready; exec sleep 60")
	for b.Loop() {
		j, err := m.Start(s)
		if err != nil {
			b.Fatal(err)
		}
		for !strings.Contains(j.ReadNew().Text, "ready") {
			time.Sleep(200 * time.Microsecond)
		}
		b.StopTimer()
		j.Kill()
		b.StartTimer()
	}
}

// BenchmarkInputWaitDetection: from the prompt's output to the job being
// waiting for input. It includes QuietForInput (1 s) by design; the
// reported detect-ms is what the detection adds on top of it.
func BenchmarkInputWaitDetection(b *testing.B) {
	m := newManager(b)
	s := spec(b, `read -p "Proceed? [y/N] " a; echo "got $a"`)
	var extra time.Duration
	for b.Loop() {
		j, err := m.Start(s)
		if err != nil {
			b.Fatal(err)
		}
		for !strings.Contains(j.ReadNew().Text, "Proceed?") {
			time.Sleep(200 * time.Microsecond)
		}
		prompt := time.Now()
		if st := j.Wait(context.Background(), hangGuard); st.Kind != WaitingForInput {
			b.Fatalf("state %q", st)
		}
		extra += time.Since(prompt) - QuietForInput
		b.StopTimer()
		j.Kill()
		b.StartTimer()
	}
	b.ReportMetric(float64(extra.Microseconds())/1000/float64(b.N), "detect-ms")
}

// BenchmarkQuietPoll: the cost of one look at a quiet job that is not
// reading its terminal (a sleep): what each poll tick costs such a job.
func BenchmarkQuietPoll(b *testing.B) {
	m := newManager(b)
	j, err := m.Start(spec(b, "sleep 60"))
	if err != nil {
		b.Fatal(err)
	}
	// Quiet for QuietForInput is the state measured, and only time passing
	// reaches it: this pause is what is set up, not a wait for an event.
	time.Sleep(QuietForInput + 100*time.Millisecond)
	for b.Loop() {
		if j.readingTerminal() {
			b.Fatal("a sleep reads its terminal")
		}
	}
}

package session

import (
	"strings"
	"testing"
)

// BenchmarkStoreAppend appends a 1 KB message (one write and one fsync
// each) to a session file in the test's temp folder.
func BenchmarkStoreAppend(b *testing.B) {
	s, err := CreateIn(b.TempDir(), "/w")
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	m := &UserMessage{Text: strings.Repeat("m", 1024)}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.Append(m); err != nil {
			b.Fatal(err)
		}
	}
}

package rpc

import "testing"

// BenchmarkParseLine is the decoding of one command line, before its
// handler runs: a prompt, and a get_messages_page with two fields.
func BenchmarkParseLine(b *testing.B) {
	s := &server{}
	for _, line := range []string{
		`{"id":"p1","type":"prompt","message":"go"}`,
		`{"id":"g1","type":"get_messages_page","cursor":"eyJ2ZXJzaW9uIjoxfQ","limit":50}`,
	} {
		b.Run(line[len(`{"id":"p1","type":"`):][:6], func(b *testing.B) {
			for b.Loop() {
				if s.parseLine([]byte(line)) == nil {
					b.Fatal("did not parse")
				}
			}
		})
	}
}

package session

import (
	"encoding/json"
	"strconv"
	"testing"
)

// Whatever the model writes after artifact://, an accepted id must be a plain
// canonical number, so it can never carry a path into the folder.
func FuzzParseArtifactURL(f *testing.F) {
	for _, s := range []string{"artifact://0", "artifact://007", "artifact://../x", "artifact://1/../x", "", "artifact://", "9", "artifact://99999999999999999999"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, err := ParseArtifactURL(s)
		if err != nil {
			return
		}
		if id == "" || !allDigits(id) || (len(id) > 1 && id[0] == '0') {
			t.Fatalf("ParseArtifactURL(%q) = %q, not a canonical number", s, id)
		}
		if n, err := strconv.Atoi(id); err == nil && strconv.Itoa(n) != id {
			t.Fatalf("ParseArtifactURL(%q) = %q, round-trips to %d", s, id, n)
		}
	})
}

// FuzzUnmarshalMessage: a message line of a session file, or of a client's
// get_messages reply fed back, is untrusted. Decoding never panics, and
// what decodes encodes to the reference's shape and decodes to the same
// message again.
func FuzzUnmarshalMessage(f *testing.F) {
	for _, m := range sampleMessages() {
		b, err := MarshalMessage(m)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, s := range []string{
		`{"role":"user","text":"old shape"}`,
		`{"role":"user","content":"plain"}`,
		`{"role":"assistant","content":[{"type":"toolCall","id":"c","name":"bash","arguments":"not an object"}]}`,
		`{"role":"assistant","content":[{"type":"thinking"},{"type":"redactedThinking"},{"type":"image","data":"x"}]}`,
		`{"role":"toolResult","content":[{"type":"text"},{"type":"text","text":null}]}`,
		`{"role":"compactionSummary","summary":"s","tokensBefore":1}`,
		`{"role":"user","content":[1,2]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m, err := UnmarshalMessage(data)
		if err != nil {
			return
		}
		b, err := MarshalMessage(m)
		if err != nil {
			t.Fatalf("decoded %s but cannot encode it: %v", data, err)
		}
		if !json.Valid(b) {
			t.Fatalf("encoded %q is not JSON", b)
		}
		m2, err := UnmarshalMessage(b)
		if err != nil {
			t.Fatalf("cannot decode its own encoding %s: %v", b, err)
		}
		b2, err := MarshalMessage(m2)
		if err != nil || string(b2) != string(b) {
			t.Fatalf("encoding is not stable:\n%s\n%s (%v)", b, b2, err)
		}
	})
}

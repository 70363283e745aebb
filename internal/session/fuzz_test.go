package session

import (
	"errors"
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

// A settings file is user input: any bytes must give a tree or a located
// error, never a panic.
func FuzzParseSettingsFile(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"bash.virtualTerminal": "on"}`, `{"bash": {"virtualTerminal": "x"}}`,
		`{"bashInterceptor": {"patterns": [{"pattern": "a", "tool": "t", "message": "m"}, 1]}}`,
		`{"a.b": 1, "a": {"c": 2}, "a.b.c": 3}`, "{\n", `[]`, `{"shell.env": {"A": 1}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		tree, err := parseSettingsFile("f.json", data)
		if err == nil {
			if tree == nil {
				t.Fatal("nil tree without error")
			}
			return
		}
		var se *SettingsError
		if !errors.As(err, &se) {
			t.Fatalf("error %v is not a *SettingsError", err)
		}
		if se.File != "f.json" || se.Line < 1 || se.Col < 1 {
			t.Fatalf("error not located: %+v", se)
		}
	})
}

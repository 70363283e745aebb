package config

import (
	"errors"
	"testing"
)

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

package tools

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// envAt is an Env whose cwd is dir and which has no artifacts.
func envAt(dir string) Env { return Env{Cwd: func() string { return dir }} }

// call runs tool with args marshalled from v (a string is sent as is).
func call(t *testing.T, tool Tool, v any) Result {
	t.Helper()
	var raw []byte
	if s, ok := v.(string); ok {
		raw = []byte(s)
	} else {
		var err error
		if raw, err = json.Marshal(v); err != nil {
			t.Fatal(err)
		}
	}
	return tool.Execute(context.Background(), raw, nil)
}

// mkTree creates files (path → content) under root; a path ending in "/"
// is an empty folder.
func mkTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if p[len(p)-1] == '/' {
			if err := os.MkdirAll(full, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func readString(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkResult compares what the model sees.
func checkResult(t *testing.T, name string, got Result, wantContent string, wantErr bool) {
	t.Helper()
	if got.Content != wantContent || got.IsError != wantErr {
		t.Errorf("%s:\n got (isError=%v):\n%s\nwant (isError=%v):\n%s", name, got.IsError, got.Content, wantErr, wantContent)
	}
}

func skipIfRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() == 0 {
		t.Skip("running as root: permissions are not enforced")
	}
}

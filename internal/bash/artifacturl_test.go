package bash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// artifact://N in a command names the artifact's file wherever it stands:
// a bare word, quotes, a heredoc, a command substitution. The folder has a
// space, a quote and a dollar in its name so bad quoting would show.
func TestArtifactURLInCommand(t *testing.T) {
	te := newToolEnv(t)
	arts := newTestArtifacts(filepath.Join(t.TempDir(), "it's a $dir"))
	te.tc.Artifacts = arts
	id, path, err := arts.Allocate("bash")
	if err != nil || id != "0" {
		t.Fatal(id, err)
	}
	if err := os.WriteFile(path, []byte("one\ntwo\nthree\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ command, want string }{
		{"wc -l < artifact://0", "3"},
		{"wc -l artifact://0 | cut -d' ' -f1", "3"},
		{`head -n1 "artifact://0"`, "one"},
		{"tail -n1 'artifact://0'", "three"},
		{`echo "$(tail -n1 artifact://0)"`, "three"},
		{"cat <<EOF\nartifact://0\nEOF", path},
		{"cat <<'EOF'\nartifact://0\nEOF", path},
		{"echo kept # artifact://7", "kept"},
		{"test -f artifact://0 && echo yes", "yes"},
	}
	for _, c := range cases {
		r := te.exec(t, ToolParams{Command: c.command})
		if r.IsError || strings.TrimSpace(r.Content) != c.want {
			t.Errorf("%q: %q (error %v), want %q", c.command, r.Content, r.IsError, c.want)
		}
	}
	r := te.exec(t, ToolParams{Command: "cat artifact://9"})
	if !r.IsError || strings.Contains(r.Content, "No such file") {
		t.Errorf("unknown artifact: %+v", r)
	}
}

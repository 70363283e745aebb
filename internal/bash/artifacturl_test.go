package bash

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// artifact://N in a command names the artifact's file where the shell
// would see it as a word: bare, in $(…) (also inside double quotes), in an
// unquoted heredoc. Inside quotes and quoted heredocs it is literal text
// (a model quoting the URL means the text): an unknown id there does not refuse the command, and nothing
// is written in place of it. The folder has a space, a quote and a dollar in
// its name so bad quoting would show.
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
		// expanded
		{"wc -l < artifact://0", "3"},
		{"wc -l artifact://0 | cut -d' ' -f1", "3"},
		{`echo "$(tail -n1 artifact://0)"`, "three"},
		{"cat <(head -n1 artifact://0)", "one"},
		{"cat <<EOF\nartifact://0\nEOF", path},
		{"cat <<EOF\n$(head -n1 artifact://0)\nEOF", "one"},
		{"test -f artifact://0 && echo yes", "yes"},
		// literal text
		{`echo "see artifact://7"`, "see artifact://7"},
		{`echo "artifact://0"`, "artifact://0"},
		{"echo 'artifact://0'", "artifact://0"},
		{"echo $'artifact://9'", "artifact://9"},
		{`echo "${NOPE:-artifact://8}"`, "artifact://8"},
		{`echo "$(echo 'artifact://9')"`, "artifact://9"},
		{"cat <<'EOF'\nartifact://0\nEOF", "artifact://0"},
		{"cat <<\"EOF\"\nsee artifact://7\nEOF", "see artifact://7"},
		{"echo kept # artifact://7", "kept"},
	}
	for _, c := range cases {
		r := te.exec(t, ToolParams{Command: c.command})
		if r.IsError || strings.TrimSpace(r.Content) != c.want {
			t.Errorf("%q: %q (error %v), want %q", c.command, r.Content, r.IsError, c.want)
		}
	}
	// A quoted heredoc writes the URL into the file, not a path.
	notes := filepath.Join(te.tc.Cwd, "notes.md")
	r := te.exec(t, ToolParams{Command: "cat > notes.md <<'EOF'\nThe build log is artifact://0.\nEOF"})
	if b, err := os.ReadFile(notes); r.IsError || err != nil || string(b) != "The build log is artifact://0.\n" {
		t.Errorf("quoted heredoc wrote %q (%v, %q)", b, err, r.Content)
	}
	// An unknown id where it would be expanded refuses the command.
	r = te.exec(t, ToolParams{Command: "cat artifact://9"})
	if !r.IsError || r.Details.ExitCode != nil || strings.Contains(r.Content, "No such file") {
		t.Errorf("unknown artifact: %+v", r)
	}
	// A command that does not parse is left to bash, which says what is wrong.
	r = te.exec(t, ToolParams{Command: `echo "artifact://9`})
	if !r.IsError || r.Details.ExitCode == nil || !strings.Contains(r.Content, "unexpected EOF") {
		t.Errorf("unparsable: %+v", r)
	}
}

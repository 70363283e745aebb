package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// numbered renders lines first.. the way read shows them.
func numbered(first int, lines ...string) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = fmt.Sprintf("%6d\t%s", first+i, l)
	}
	return strings.Join(out, "\n")
}

func seqLines(n int, format string) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, format+"\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	dir := t.TempDir()
	long := strings.Repeat("x", 2500)
	wide := strings.Repeat("世", 2100)
	mkTree(t, dir, map[string]string{
		"a.txt":      "alpha\nbeta\n",
		"crlf.txt":   "one\r\ntwo\r\n\r\nfour",
		"uni.txt":    "héllo wörld\n世界 🙂 ｆｕｌｌ\n",
		"nolf.txt":   "x\ny",
		"cr.txt":     "x\r",
		"bom.txt":    "\uFEFFfirst\nsecond\n",
		"ten.txt":    seqLines(10, "line %d"),
		"empty.txt":  "",
		"blank.txt":  "\n",
		"long.txt":   long + "\nshort\n",
		"wide.txt":   wide + "\n",
		"bin.dat":    "abc\x00def",
		"latin1.txt": "caf\xe9 \xe0 \xe8\xe9\xea\xeb\xec\xed\xee\xef\n",
		"sub/":       "",
		"deep/x.txt": "deep\n",
	})
	if err := os.Symlink("a.txt", filepath.Join(dir, "link.txt")); err != nil {
		t.Fatal(err)
	}
	tool := NewRead(envAt(dir))
	tests := []struct {
		name    string
		args    any
		want    string
		wantErr bool
	}{
		{"plain", map[string]any{"path": "a.txt"}, numbered(1, "alpha", "beta"), false},
		{"absolute", map[string]any{"path": filepath.Join(dir, "a.txt")}, numbered(1, "alpha", "beta"), false},
		{"crlf without \\r", map[string]any{"path": "crlf.txt"}, numbered(1, "one", "two", "", "four"), false},
		{"unicode", map[string]any{"path": "uni.txt"}, numbered(1, "héllo wörld", "世界 🙂 ｆｕｌｌ"), false},
		{"no final newline", map[string]any{"path": "nolf.txt"}, numbered(1, "x", "y"), false},
		{"final lone cr", map[string]any{"path": "cr.txt"}, numbered(1, "x"), false},
		{"bom dropped", map[string]any{"path": "bom.txt"}, numbered(1, "first", "second"), false},
		{"offset and limit", map[string]any{"path": "ten.txt", "offset": 3, "limit": 2},
			numbered(3, "line 3", "line 4") + "\n\n[Showing lines 3-4 of 10. Use offset=5 to continue.]", false},
		{"offset to end", map[string]any{"path": "ten.txt", "offset": 9}, numbered(9, "line 9", "line 10"), false},
		{"limit reaching end has no notice", map[string]any{"path": "ten.txt", "offset": 8, "limit": 3},
			numbered(8, "line 8", "line 9", "line 10"), false},
		{"numbers as strings", map[string]any{"path": "ten.txt", "offset": "10", "limit": "1"}, numbered(10, "line 10"), false},
		{"offset past end", map[string]any{"path": "ten.txt", "offset": 11},
			"Offset 11 is beyond the end of ten.txt (10 lines)", true},
		{"offset past end of one line", map[string]any{"path": "blank.txt", "offset": 2},
			"Offset 2 is beyond the end of blank.txt (1 line)", true},
		{"blank line", map[string]any{"path": "blank.txt"}, numbered(1, ""), false},
		{"empty", map[string]any{"path": "empty.txt"}, "[File is empty: empty.txt]", false},
		{"empty with offset", map[string]any{"path": "empty.txt", "offset": 2},
			"Offset 2 is beyond the end of empty.txt (0 lines)", true},
		{"long line cut", map[string]any{"path": "long.txt"},
			numbered(1, strings.Repeat("x", 2000)+"… [500 chars omitted]", "short"), false},
		{"wide chars cut by characters", map[string]any{"path": "wide.txt"},
			numbered(1, strings.Repeat("世", 2000)+"… [100 chars omitted]"), false},
		{"symlink to file", map[string]any{"path": "link.txt"}, numbered(1, "alpha", "beta"), false},
		{"nested", map[string]any{"path": "deep/x.txt"}, numbered(1, "deep"), false},
		{"missing", map[string]any{"path": "nope.txt"}, "File not found: nope.txt", true},
		{"missing parent", map[string]any{"path": "a.txt/x"}, "File not found: a.txt/x (a parent is not a directory)", true},
		{"directory", map[string]any{"path": "sub"}, "Not a file: sub (it is a directory)", true},
		{"binary", map[string]any{"path": "bin.dat"}, "Cannot read binary file: bin.dat (contains NUL bytes)", true},
		{"not utf-8", map[string]any{"path": "latin1.txt"}, "Cannot read binary file: latin1.txt (not valid UTF-8 text)", true},
		{"artifact without resolver", map[string]any{"path": "artifact://3"},
			"Cannot open artifact://3: artifact:// paths are not available in this session", true},
		{"empty path", map[string]any{"path": " "}, "path must not be empty", true},
		{"missing path", map[string]any{}, `Missing required argument "path" for read`, true},
		{"offset zero", map[string]any{"path": "a.txt", "offset": 0}, "Invalid offset: must be at least 1, got 0", true},
		{"fractional limit", map[string]any{"path": "a.txt", "limit": 1.5}, "Invalid limit: expected an integer, got 1.5", true},
		{"path not a string", map[string]any{"path": 5}, "Invalid path: expected a string, got 5", true},
		{"unknown argument", map[string]any{"path": "a.txt", "lines": 3}, `Unknown argument "lines" for read (allowed: path, offset, limit)`, true},
		{"null optional", `{"path":"a.txt","offset":null,"limit":null}`, numbered(1, "alpha", "beta"), false},
		{"not json", `{"path":`, "Invalid read arguments: unexpected end of JSON input", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkResult(t, tc.name, call(t, tool, tc.args), tc.want, tc.wantErr)
		})
	}
}

func TestReadHomeAndDetails(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	mkTree(t, home, map[string]string{"h.txt": seqLines(5, "h%d")})
	tool := NewRead(envAt(t.TempDir()))
	res := call(t, tool, map[string]any{"path": "~/h.txt", "limit": 2})
	checkResult(t, "home", res, numbered(1, "h1", "h2")+"\n\n[Showing lines 1-2 of 5. Use offset=3 to continue.]", false)
	var d ReadDetails
	if err := json.Unmarshal(res.Details, &d); err != nil {
		t.Fatal(err)
	}
	want := ReadDetails{Path: filepath.Join(home, "h.txt"), StartLine: 1, EndLine: 2, TotalLines: 5, TruncatedBy: "lines", NextOffset: 3}
	if d != want {
		t.Errorf("details = %+v, want %+v", d, want)
	}
}

func TestReadDefaultLimits(t *testing.T) {
	dir := t.TempDir()
	line100 := strings.Repeat("y", 100)
	mkTree(t, dir, map[string]string{
		"many.txt": seqLines(2500, "n%d"),
		"wide.txt": strings.Repeat(line100+"\n", 1000),
	})
	tool := NewRead(envAt(dir))

	res := call(t, tool, map[string]any{"path": "many.txt"})
	var want []string
	for i := 1; i <= 2000; i++ {
		want = append(want, fmt.Sprintf("n%d", i))
	}
	checkResult(t, "line limit", res, numbered(1, want...)+"\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]", false)

	res = call(t, tool, map[string]any{"path": "many.txt", "offset": 2001})
	want = want[:0]
	for i := 2001; i <= 2500; i++ {
		want = append(want, fmt.Sprintf("n%d", i))
	}
	checkResult(t, "continued", res, numbered(2001, want...), false)

	// Each shown line is 6+1+100 bytes plus a newline: 474 lines fit in 50KB.
	res = call(t, tool, map[string]any{"path": "wide.txt"})
	want = want[:0]
	for i := 0; i < 474; i++ {
		want = append(want, line100)
	}
	checkResult(t, "byte limit", res, numbered(1, want...)+"\n\n[Showing lines 1-474 of 1000 (50.0KB limit). Use offset=475 to continue.]", false)
	var d ReadDetails
	if err := json.Unmarshal(res.Details, &d); err != nil || d.TruncatedBy != "bytes" || d.NextOffset != 475 || d.TotalLines != 1000 {
		t.Errorf("details = %+v (%v)", d, err)
	}
	// A larger explicit limit still stops at 50KB.
	res = call(t, tool, map[string]any{"path": "wide.txt", "limit": 5000, "offset": 900})
	want = want[:0]
	for i := 0; i < 101; i++ {
		want = append(want, line100)
	}
	checkResult(t, "byte limit not reached", res, numbered(900, want...), false)
}

// bigFile writes a file of about 10MB: 104858 lines of 100 bytes.
func bigFile(t *testing.T, dir string) (string, int) {
	t.Helper()
	const n = 104858
	var b strings.Builder
	b.Grow(n * 100)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "%07d %s\n", i, strings.Repeat("z", 91))
	}
	if i := n - 7; i > 0 {
		// one line to find near the end
		s := b.String()
		off := (i - 1) * 100
		s = s[:off] + fmt.Sprintf("%07d %s\n", i, "needle"+strings.Repeat("z", 85)) + s[off+100:]
		p := filepath.Join(dir, "big.txt")
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return p, n
	}
	return "", 0
}

func TestReadBigFileWindow(t *testing.T) {
	dir := t.TempDir()
	p, n := bigFile(t, dir)
	if fi, err := os.Stat(p); err != nil || fi.Size() < 10<<20 {
		t.Fatalf("big file: %v %v", fi, err)
	}
	tool := NewRead(envAt(dir))
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res := call(t, tool, map[string]any{"path": "big.txt", "offset": n - 2, "limit": 2})
	runtime.ReadMemStats(&after)
	z := strings.Repeat("z", 91)
	want := numbered(n-2, fmt.Sprintf("%07d %s", n-2, z), fmt.Sprintf("%07d %s", n-1, z)) +
		fmt.Sprintf("\n\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", n-2, n-1, n, n)
	checkResult(t, "window at the end", res, want, false)
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > 4<<20 {
		t.Errorf("reading a 2-line window allocated %d bytes: the file was loaded whole", alloc)
	}
}

func TestReadArtifact(t *testing.T) {
	dir := t.TempDir()
	art := filepath.Join(t.TempDir(), "3.bash.log")
	if err := os.WriteFile(art, []byte(seqLines(4, "out %d")), 0o600); err != nil {
		t.Fatal(err)
	}
	var asked []string
	env := envAt(dir)
	env.ResolveArtifact = func(url string) (string, error) {
		asked = append(asked, url)
		if url == "artifact://3" {
			return art, nil
		}
		return "", errors.New("Artifact 9 not found. Available: 3")
	}
	tool := NewRead(env)
	res := call(t, tool, map[string]any{"path": "artifact://3", "offset": 2, "limit": 2})
	checkResult(t, "artifact", res, numbered(2, "out 2", "out 3")+"\n\n[Showing lines 2-3 of 4. Use offset=4 to continue.]", false)
	var d ReadDetails
	if err := json.Unmarshal(res.Details, &d); err != nil || d.Path != art || d.Artifact != "artifact://3" {
		t.Errorf("details = %+v (%v)", d, err)
	}
	checkResult(t, "missing artifact", call(t, tool, map[string]any{"path": "artifact://9"}), "Artifact 9 not found. Available: 3", true)
	if strings.Join(asked, ",") != "artifact://3,artifact://9" {
		t.Errorf("resolver asked %v", asked)
	}
	// The writing tools refuse artifacts.
	res = call(t, NewEdit(env), map[string]any{"path": "artifact://3", "oldText": "a", "newText": "b"})
	checkResult(t, "edit artifact", res, "The edit tool cannot use artifact://3: artifact:// outputs are read-only (use read or grep on them)", true)
	res = call(t, NewWrite(env), map[string]any{"path": "artifact://3", "content": "x"})
	checkResult(t, "write artifact", res, "The write tool cannot use artifact://3: artifact:// outputs are read-only (use read or grep on them)", true)
}

func TestReadPermissionDenied(t *testing.T) {
	skipIfRoot(t)
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"secret.txt": "s\n"})
	if err := os.Chmod(filepath.Join(dir, "secret.txt"), 0); err != nil {
		t.Fatal(err)
	}
	checkResult(t, "denied", call(t, NewRead(envAt(dir)), map[string]any{"path": "secret.txt"}), "Permission denied: secret.txt", true)
}

func TestReadAborted(t *testing.T) {
	dir := t.TempDir()
	mkTree(t, dir, map[string]string{"a.txt": "a\n"})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := NewRead(envAt(dir)).Execute(ctx, json.RawMessage(`{"path":"a.txt"}`), nil)
	if !res.Aborted || !res.IsError || res.Content != "The read call was aborted" {
		t.Errorf("aborted = %+v", res)
	}
}

func TestFileToolsOrderAndSchemas(t *testing.T) {
	ts := FileTools(Env{})
	var names []string
	for _, tl := range ts {
		names = append(names, tl.Name())
		var s struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(tl.Schema(), &s); err != nil {
			t.Fatalf("%s schema: %v", tl.Name(), err)
		}
		if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties || len(s.Required) == 0 {
			t.Errorf("%s schema = %s", tl.Name(), tl.Schema())
		}
		for _, r := range s.Required {
			if _, ok := s.Properties[r]; !ok {
				t.Errorf("%s requires unknown %q", tl.Name(), r)
			}
		}
		if len(tl.Description()) < 100 {
			t.Errorf("%s description too short: %q", tl.Name(), tl.Description())
		}
	}
	if got := strings.Join(names, ","); got != "read,grep,find,edit,write" {
		t.Errorf("FileTools order = %s", got)
	}
	if _, err := NewRegistry(ts...); err != nil {
		t.Errorf("registry: %v", err)
	}
}

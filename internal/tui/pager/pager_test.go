package pager

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"agentsh/internal/sink"
)

// openPager opens path with the default keys, for an 80×24 window.
func openPager(path, title string) (*Pager, error) {
	return Open(path, title, DefaultKeyMap(), 80, 24)
}

// testStyles are the TUI's styles for the pager (see tui's newStyles).
func testStyles(noColor bool) Styles {
	base := lipgloss.NewStyle()
	if noColor {
		return Styles{Title: base, Dim: base, Warning: base, Error: base, NoColor: true}
	}
	return Styles{Title: base.Bold(true), Dim: base.Foreground(lipgloss.Color("8")),
		Warning: base.Foreground(lipgloss.Color("11")), Error: base.Foreground(lipgloss.Color("9"))}
}

// view sizes p for a w × h window, as the TUI does on a resize, and draws
// it.
func view(p *Pager, w, h int, st Styles) string {
	p.SetSize(w, h)
	return p.View(w, h, st)
}

// pagerFile writes content to a temp file and opens a pager on it.
func pagerFile(t testing.TB, content string) *Pager {
	t.Helper()
	path := filepath.Join(t.TempDir(), "artifact.txt")
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := openPager(path, "artifact://3 · $ test")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

func pgSeq(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		b.WriteString(strconv.Itoa(i))
		b.WriteByte('\n')
	}
	return b.String()
}

// pgKey is the key press for a key name as msg.String() spells it.
func pgKey(name string) tea.KeyPressMsg {
	special := map[string]rune{
		"up": tea.KeyUp, "down": tea.KeyDown, "left": tea.KeyLeft, "right": tea.KeyRight,
		"pgup": tea.KeyPgUp, "pgdown": tea.KeyPgDown, "home": tea.KeyHome, "end": tea.KeyEnd,
		"esc": tea.KeyEscape, "enter": tea.KeyEnter, "backspace": tea.KeyBackspace,
	}
	if c, ok := special[name]; ok {
		return tea.KeyPressMsg{Code: c}
	}
	if name == "space" {
		return tea.KeyPressMsg{Code: tea.KeySpace, Text: " "}
	}
	if c, ok := strings.CutPrefix(name, "ctrl+"); ok {
		return tea.KeyPressMsg{Code: rune(c[0]), Mod: tea.ModCtrl}
	}
	r := []rune(name)[0]
	return tea.KeyPressMsg{Code: r, Text: name}
}

// pgPress sends keys by name and fails if one closes the pager.
func pgPress(t *testing.T, p *Pager, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if p.Update(pgKey(k)) {
			t.Fatalf("%q closed the pager", k)
		}
	}
}

// pgType types text one rune at a time.
func pgType(t *testing.T, p *Pager, s string) {
	t.Helper()
	for _, r := range s {
		if p.Update(tea.KeyPressMsg{Code: r, Text: string(r)}) {
			t.Fatalf("%q closed the pager", r)
		}
	}
}

// pgSearch types /q enter.
func pgSearch(t *testing.T, p *Pager, q string) {
	t.Helper()
	pgPress(t, p, "/")
	pgType(t, p, q)
	pgPress(t, p, "enter")
}

// pgScreen renders p and checks its shape; it returns the plain lines.
func pgScreen(t testing.TB, p *Pager, w, h int, st Styles) []string {
	t.Helper()
	v := view(p, w, h, st)
	lines := strings.Split(v, "\n")
	if len(lines) != h {
		t.Fatalf("%dx%d: %d lines:\n%s", w, h, len(lines), v)
	}
	for i, l := range lines {
		if lw := ansi.StringWidth(l); lw > w {
			t.Fatalf("%dx%d: line %d is %d wide: %q", w, h, i, lw, l)
		}
	}
	if st.NoColor && strings.Contains(ansi.Strip(v), "\x1b") {
		t.Fatalf("escape left in the text: %q", v)
	}
	for i := range lines {
		lines[i] = ansi.Strip(lines[i])
	}
	return lines
}

// pgBodyText is the text column of body row i (without the gutter).
func pgBodyText(lines []string, i, gutter int) string {
	return strings.TrimRight(lines[1+i][gutter:], " ")
}

func TestPagerFirstScreenAndEnd(t *testing.T) {
	p := pagerFile(t, pgSeq(100000))
	st := testStyles(true)
	s := pgScreen(t, p, 80, 24, st)
	if !strings.Contains(s[0], "artifact://3 · $ test") || !strings.Contains(s[0], "line 1–22 of 100000") || !strings.Contains(s[0], "22%") && !strings.Contains(s[0], " 0%") {
		t.Errorf("header %q", s[0])
	}
	if got := strings.TrimSpace(s[1]); got != "1 1" {
		t.Errorf("first row %q", got)
	}
	if got := strings.TrimSpace(s[22]); got != "22 22" {
		t.Errorf("last row %q", got)
	}
	if !strings.Contains(s[23], DefaultKeyMap().help()) {
		t.Errorf("footer %q", s[23])
	}
	pgPress(t, p, "G")
	s = pgScreen(t, p, 80, 24, st)
	if got := strings.TrimSpace(s[22]); got != "100000 100000" {
		t.Errorf("G: last row %q\n%s", got, strings.Join(s, "\n"))
	}
	if !strings.Contains(s[0], "line 99979–100000 of 100000") || !strings.Contains(s[0], "100%") {
		t.Errorf("G: header %q", s[0])
	}
	pgPress(t, p, "down", "j", "pgdown", "space", "ctrl+d") // clamped at the end
	if s2 := pgScreen(t, p, 80, 24, st); s2[1] != s[1] {
		t.Errorf("scrolled past the end: %q", s2[1])
	}
	pgPress(t, p, "g")
	if s = pgScreen(t, p, 80, 24, st); strings.TrimSpace(s[1]) != "1 1" {
		t.Errorf("g: %q", s[1])
	}
}

func TestPagerScrollKeys(t *testing.T) {
	p := pagerFile(t, pgSeq(1000))
	st := testStyles(false)
	top := func() string {
		s := pgScreen(t, p, 40, 12, st) // body 10 rows
		return strings.Fields(s[1])[1]
	}
	for _, c := range []struct {
		key  string
		want string
	}{
		{"j", "2"}, {"down", "3"}, {"k", "2"}, {"up", "1"}, {"up", "1"},
		{"pgdown", "11"}, {"space", "21"}, {"b", "11"}, {"pgup", "1"},
		{"ctrl+d", "6"}, {"ctrl+u", "1"}, {"end", "991"}, {"home", "1"},
	} {
		pgPress(t, p, c.key)
		if got := top(); got != c.want {
			t.Fatalf("after %s: top %s, want %s", c.key, got, c.want)
		}
	}
	p.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
	if got := top(); got != "4" {
		t.Errorf("wheel down: top %s", got)
	}
	p.Update(tea.MouseWheelMsg{Button: tea.MouseWheelUp})
	if got := top(); got != "1" {
		t.Errorf("wheel up: top %s", got)
	}
}

func TestPagerSearch(t *testing.T) {
	p := pagerFile(t, pgSeq(100000))
	st := testStyles(true)
	pgSearch(t, p, "99999")
	s := pgScreen(t, p, 80, 24, st)
	found := false
	for _, l := range s[1:23] {
		if strings.TrimSpace(l) == "99999▸99999" { // the gutter marks the match line
			found = true
		}
	}
	if !found {
		t.Fatalf("99999 not shown:\n%s", strings.Join(s, "\n"))
	}
	// The only match: n wraps around to it.
	pgPress(t, p, "n")
	s = pgScreen(t, p, 80, 24, st)
	if !strings.Contains(s[23], "search hit BOTTOM, continuing at TOP") || !strings.Contains(strings.Join(s, "\n"), "99999▸99999") {
		t.Errorf("n did not wrap:\n%s", strings.Join(s, "\n"))
	}
	// In colour, the match is highlighted.
	v := view(p, 80, 24, testStyles(false))
	if !strings.Contains(v, matchStyle(false).Render("99999")) {
		t.Errorf("no highlight: %q", v)
	}
	pgSearch(t, p, "zzz")
	s = pgScreen(t, p, 80, 24, st)
	if !strings.Contains(s[23], "Pattern not found: zzz") {
		t.Errorf("footer %q", s[23])
	}
	pgPress(t, p, "j") // the message lasts until the next key
	if s = pgScreen(t, p, 80, 24, st); strings.Contains(s[23], "Pattern not found") {
		t.Errorf("message stays: %q", s[23])
	}
}

func TestPagerSearchNextPrevWraps(t *testing.T) {
	var b strings.Builder
	for i := range 100 {
		switch i {
		case 3, 50:
			fmt.Fprintf(&b, "line %d has a Needle\n", i)
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	p := pagerFile(t, b.String())
	st := testStyles(true)
	matchLine := func() int { pgScreen(t, p, 60, 12, st); return p.matchLine }
	pgSearch(t, p, "needle") // smart case: lower case matches Needle
	if got := matchLine(); got != 3 {
		t.Fatalf("first match %d", got)
	}
	pgPress(t, p, "n")
	if got := matchLine(); got != 50 {
		t.Fatalf("n: %d", got)
	}
	pgPress(t, p, "n")
	if got := matchLine(); got != 3 || !strings.Contains(p.msg, "BOTTOM") {
		t.Fatalf("n wrap: %d %q", got, p.msg)
	}
	pgPress(t, p, "N")
	if got := matchLine(); got != 50 || !strings.Contains(p.msg, "TOP") {
		t.Fatalf("N wrap: %d %q", got, p.msg)
	}
	pgPress(t, p, "N")
	if got := matchLine(); got != 3 {
		t.Fatalf("N: %d", got)
	}
	pgSearch(t, p, "NEEDLE") // upper case: case-sensitive
	if got := matchLine(); got != -1 || !strings.Contains(p.msg, "Pattern not found: NEEDLE") {
		t.Fatalf("NEEDLE: %d %q", got, p.msg)
	}
	// enter on an empty prompt repeats the last search.
	pgSearch(t, p, "Needle")
	pgSearch(t, p, "")
	if got := matchLine(); got != 3 {
		t.Fatalf("repeat: %d", got)
	}
}

func TestPagerPrompt(t *testing.T) {
	p := pagerFile(t, "alpha\nbeta\ngamma\n")
	st := testStyles(true)
	pgPress(t, p, "/")
	pgType(t, p, "gax")
	pgPress(t, p, "backspace")
	p.Update(tea.PasteMsg{Content: "mm\n"})
	s := pgScreen(t, p, 40, 6, st)
	if !strings.HasPrefix(s[5], "/gamm █") {
		t.Errorf("prompt %q", s[5])
	}
	pgPress(t, p, "backspace", "backspace", "esc") // esc cancels the prompt only
	if p.prompt {
		t.Fatal("esc left the prompt open")
	}
	if p.search != nil {
		t.Errorf("a cancelled prompt searched")
	}
	// q in the prompt is text.
	pgPress(t, p, "/")
	pgType(t, p, "q")
	if p.input != "q" {
		t.Errorf("input %q", p.input)
	}
	pgPress(t, p, "esc")
	if !p.Update(pgKey("esc")) {
		t.Error("esc did not close")
	}
	if !p.Update(pgKey("q")) {
		t.Error("q did not close")
	}
	// A long input shows its end.
	pgPress(t, p, "/")
	pgType(t, p, strings.Repeat("x", 50)+"END")
	s = pgScreen(t, p, 20, 4, st)
	if !strings.HasSuffix(strings.TrimSpace(s[3]), "END█") {
		t.Errorf("long prompt %q", s[3])
	}
}

func TestPagerWrapAndHorizontalScroll(t *testing.T) {
	long := ""
	for i := range 40 {
		long += fmt.Sprintf("%03d-abcdef ", i) // 11 columns each
	}
	p := pagerFile(t, long+"\nend\n")
	st := testStyles(true)
	const w, h = 42, 16 // gutter 2, text 40, body 14
	s := pgScreen(t, p, w, h, st)
	if got := pgBodyText(s, 0, 2); got != long[:40] {
		t.Errorf("no wrap: %q", got)
	}
	if got := pgBodyText(s, 1, 2); got != "end" {
		t.Errorf("second line %q", got)
	}
	pgPress(t, p, "l") // half a screen
	s = pgScreen(t, p, w, h, st)
	if got := pgBodyText(s, 0, 2); got != long[20:60] {
		t.Errorf("l: %q", got)
	}
	if !strings.Contains(s[0], "col 21") {
		t.Errorf("header %q", s[0])
	}
	pgPress(t, p, "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right", "right")
	s = pgScreen(t, p, w, h, st)
	if got := pgBodyText(s, 0, 2); got != strings.TrimRight(long[len(long)-40:], " ") {
		t.Errorf("scrolled past the end of the line: %q", got)
	}
	pgPress(t, p, "h", "left", "0")
	if got := pgBodyText(pgScreen(t, p, w, h, st), 0, 2); got != long[:40] {
		t.Errorf("0: %q", got)
	}
	pgPress(t, p, "w")
	s = pgScreen(t, p, w, h, st)
	if !strings.Contains(s[0], "wrap") {
		t.Errorf("header %q", s[0])
	}
	var joined string
	for i := 0; i < 11; i++ { // 440 columns in 11 rows
		row := s[1+i]
		if i == 0 && !strings.HasPrefix(row, "1 ") || i > 0 && !strings.HasPrefix(row, "  ") {
			t.Errorf("gutter of row %d: %q", i, row)
		}
		joined += row[2:]
	}
	if joined != long {
		t.Errorf("wrapped text\n%q\nwant\n%q", joined, long)
	}
	if s[12] != "2 end"+strings.Repeat(" ", w-5) {
		t.Errorf("row after the long line: %q", s[12])
	}
	const h2 = 10             // body 8: the 12 rows do not fit
	pgScreen(t, p, w, h2, st) // page moves use the window's size
	pgPress(t, p, "j")        // one row down
	if got := pgBodyText(pgScreen(t, p, w, h2, st), 0, 2); got != long[40:80] {
		t.Errorf("wrap j: %q", got)
	}
	pgPress(t, p, "G") // end: "end" on the bottom row
	s = pgScreen(t, p, w, h2, st)
	if got := strings.TrimSpace(s[h2-2]); got != "2 end" || pgBodyText(s, 0, 2) != long[160:200] {
		t.Errorf("wrap G: %q\n%s", got, strings.Join(s, "\n"))
	}
	pgPress(t, p, "k", "k")
	s = pgScreen(t, p, w, h2, st)
	if got := pgBodyText(s, 0, 2); got != long[80:120] {
		t.Errorf("wrap k: %q", got)
	}
	if got := strings.TrimSpace(s[h2-2]); got != strings.TrimSpace(long[360:400]) {
		t.Errorf("wrap k bottom: %q", got)
	}
	pgPress(t, p, "pgup")
	if s = pgScreen(t, p, w, h2, st); !strings.HasPrefix(s[1], "1 000-abcdef") {
		t.Errorf("wrap pgup: %q", s[1])
	}
}

func TestPagerSanitizes(t *testing.T) {
	p := pagerFile(t, "a\r\nb\x1b[31mred\x1b[0m\tX\x01\x7f\xff\r\n\x1b]8;;http://x\x07link\x1b]8;;\x07 é 世界 \u202eevil\rmid\r\nno newline")
	s := pgScreen(t, p, 40, 6, testStyles(true))
	want := []string{"a", "bred    X^A^?\uFFFD", "mid", "no newline"}
	for i, w := range want {
		if got := pgBodyText(s, i, 2); got != w {
			t.Errorf("line %d: %q, want %q", i+1, got, w)
		}
	}
	if !strings.Contains(s[0], "of 4") {
		t.Errorf("header %q", s[0])
	}
}

// TestPagerProgressBar: the artifact keeps every frame of a progress bar;
// the pager shows each line's final state, also for a line longer than
// the part of a line it reads.
func TestPagerProgressBar(t *testing.T) {
	var long strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&long, "\r%5d/20000", i+1)
	}
	p := pagerFile(t, "get\n 10%\r 50%\r100%\n"+long.String()+"\ndone\n")
	s := pgScreen(t, p, 40, 6, testStyles(true))
	for i, w := range []string{"get", "100%", "20000/20000", "done"} {
		if got := pgBodyText(s, i, 2); got != w {
			t.Errorf("line %d: %q, want %q", i+1, got, w)
		}
	}
}

func TestPagerEmptyAndMissing(t *testing.T) {
	p := pagerFile(t, "")
	s := pgScreen(t, p, 30, 5, testStyles(true))
	if !strings.Contains(s[1], "(empty)") {
		t.Errorf("empty: %q", strings.Join(s, "\n"))
	}
	pgSearch(t, p, "x")
	pgPress(t, p, "G", "n", "N", "w", "l", "j")
	pgScreen(t, p, 30, 5, testStyles(true))
	if _, err := openPager(filepath.Join(t.TempDir(), "missing"), "x"); err == nil {
		t.Error("no error for a missing file")
	}
	if _, err := openPager(t.TempDir(), "x"); err == nil {
		t.Error("no error for a directory")
	}
	if p := pagerFile(t, "\n"); p.idx.n != 1 {
		t.Errorf("a lone newline is %d lines", p.idx.n)
	}
}

func TestPagerLongLine(t *testing.T) {
	long := strings.Repeat("0123456789", 20000) // 200 KB, past lineCap
	p := pagerFile(t, "first\n"+long+"\nlast\n")
	st := testStyles(true)
	start := time.Now()
	s := pgScreen(t, p, 80, 10, st)
	if got := pgBodyText(s, 1, 2); got != long[:78] {
		t.Errorf("long line: %q", got)
	}
	pgPress(t, p, "w", "G")
	s = pgScreen(t, p, 80, 10, st)
	if !strings.Contains(strings.Join(s, "\n"), "… [+131.3 KB not shown]") {
		t.Errorf("no truncation note:\n%s", strings.Join(s, "\n"))
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("slow: %v", d)
	}
}

func TestPagerSizes(t *testing.T) {
	long := strings.Repeat("wide 世界 ", 30)
	p := pagerFile(t, pgSeq(50)+long+"\n\ttab\x1b[1mbold\n"+pgSeq(30))
	for _, noColor := range []bool{true, false} {
		st := testStyles(noColor)
		for _, wrap := range []bool{false, true} {
			p.wrap = wrap
			for _, prompt := range []bool{false, true} {
				p.prompt, p.input = prompt, strings.Repeat("q", 30)
				for _, sz := range [][2]int{{80, 24}, {10, 3}, {1, 1}, {2, 2}, {3, 1}, {5, 4}, {12, 5}, {200, 50}, {0, 3}, {7, 0}} {
					for _, k := range []string{"g", "G", "k", "l", "l", "pgup", "N"} {
						p.prompt = false
						pgPress(t, p, k)
						p.prompt = prompt
						if sz[1] == 0 {
							if v := view(p, sz[0], sz[1], st); v != "" {
								t.Errorf("height 0: %q", v)
							}
							continue
						}
						pgScreen(t, p, sz[0], sz[1], st)
					}
				}
			}
		}
	}
}

// TestPagerRandomKeys presses random keys at random sizes: every frame has
// the right shape, and colour changes nothing but the escape codes.
func TestPagerRandomKeys(t *testing.T) {
	var b strings.Builder
	b.WriteString(pgSeq(300))
	b.WriteString(strings.Repeat("long \x1b[32mgreen\x1b[0m 世界 tab\there ", 3000) + "\n")
	b.WriteString("\r\n\x00\x07\xfe\xff é\u0301 👍🏽 🇫🇷 1\ufe0f\u20e3\n")
	for i := range 200 {
		fmt.Fprintf(&b, "%s%d\n", strings.Repeat("\t", i%3), i*i)
	}
	p := pagerFile(t, b.String())
	plain, color := testStyles(true), testStyles(false)
	keys := []string{"j", "k", "up", "down", "pgup", "pgdown", "space", "b", "g", "G", "home", "end",
		"ctrl+u", "ctrl+d", "h", "l", "left", "right", "0", "w", "w", "n", "N", "/", "esc", "enter", "backspace"}
	r := rand.New(rand.NewPCG(5, 6))
	for range 3000 {
		w, h := 1+r.IntN(120), 1+r.IntN(40)
		switch k := keys[r.IntN(len(keys))]; {
		case k == "/":
			pgPress(t, p, "/")
			pgType(t, p, []string{"1", "green", "世", "É", "zz", "tab here"}[r.IntN(6)])
		case k == "esc" && !p.prompt:
		default:
			pgPress(t, p, k)
		}
		if r.IntN(5) == 0 {
			p.Update(tea.MouseWheelMsg{Button: tea.MouseWheelDown})
		}
		a := pgScreen(t, p, w, h, plain)
		c := pgScreen(t, p, w, h, color)
		if fmt.Sprint(a) != fmt.Sprint(c) {
			t.Fatalf("%dx%d: colour changes the text:\n%s\n--\n%s", w, h, strings.Join(a, "\n"), strings.Join(c, "\n"))
		}
	}
}

// TestPagerIndex checks the sparse index against the file on content mixing
// short, empty and long lines, so blocks end both ways, and on edge cases.
func TestPagerIndex(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var mixed bytes.Buffer
	for range 70000 {
		switch r.IntN(2000) {
		case 0:
			mixed.WriteString(strings.Repeat("L", r.IntN(200<<10)))
		case 1, 2, 3, 4, 5:
		default:
			mixed.WriteString(strings.Repeat("s", r.IntN(30)))
		}
		mixed.WriteByte('\n')
	}
	mixed.WriteString("tail")
	span := func(n int) string { return strings.Repeat("x", n) + "\n" }
	for name, data := range map[string]string{
		"mixed":       mixed.String(),
		"newlines":    strings.Repeat("\n", 3*scanChunk+5),
		"spans":       span(blockSpan-2) + span(blockSpan-1) + span(blockSpan) + span(blockSpan+1) + span(0) + span(3),
		"one line":    strings.Repeat("y", scanChunk+blockSpan+7),
		"crlf":        strings.Repeat("ab\r\n", 1000),
		"63 then big": strings.Repeat("\n", 63) + span(2*blockSpan) + strings.Repeat("z\n", 200),
		"x":           "x",
	} {
		t.Run(name, func(t *testing.T) {
			p := pagerFile(t, data)
			var starts []int64
			for i := 0; i < len(data); {
				starts = append(starts, int64(i))
				j := strings.IndexByte(data[i:], '\n')
				if j < 0 || i+j+1 == len(data) {
					break
				}
				i += j + 1
			}
			x := p.idx
			if x.n != len(starts) {
				t.Fatalf("%d lines, want %d", x.n, len(starts))
			}
			if name == "mixed" {
				full := 0
				for k := range x.blocks {
					if k+1 < len(x.blocks) && x.first[k+1]-x.first[k] == idxBlock {
						full++
					}
				}
				if full == 0 || full == len(x.blocks)-1 {
					t.Errorf("%d of %d blocks are full: the test does not cover both kinds", full, len(x.blocks))
				}
			}
			for k := range x.blocks { // the bound that keeps block reads short
				st := x.block(k)
				if last := st[len(st)-1]; last-x.blocks[k] > blockSpan {
					t.Fatalf("block %d: a start %d bytes in", k, last-x.blocks[k])
				}
			}
			order := make([]int, len(starts)) // in order, then a random sample
			for i := range order {
				order[i] = i
			}
			for range 5000 {
				order = append(order, r.IntN(len(starts)))
			}
			for _, i := range order {
				if got := x.start(i); got != starts[i] {
					t.Fatalf("start(%d) = %d, want %d", i, got, starts[i])
				}
				end := int64(len(data))
				if i+1 < len(starts) {
					end = starts[i+1] - 1
				} else if strings.HasSuffix(data, "\n") {
					end--
				}
				if got := x.end(i); got != end {
					t.Fatalf("end(%d) = %d, want %d", i, got, end)
				}
				if got := x.lineOf(starts[i] + (end-starts[i])/2); got != i {
					t.Fatalf("lineOf in line %d = %d", i, got)
				}
			}
		})
	}
}

// TestPagerScanChunks searches content larger than a chunk, with a match
// across a chunk boundary and matches behind escape sequences.
func TestPagerScanChunks(t *testing.T) {
	var b strings.Builder
	b.WriteString(strings.Repeat("a", scanChunk-3) + "needle" + strings.Repeat("a", scanChunk) + "\n") // line 0
	for i := 1; b.Len() < 3*scanChunk; i++ {
		switch {
		case i%7919 == 0:
			b.WriteString("x \x1b[31mNee\x1b[0mdle y\n")
		case i%5003 == 0:
			b.WriteString("NEEDLE\n")
		default:
			fmt.Fprintf(&b, "line %d\n", i)
		}
	}
	data := b.String()
	p := pagerFile(t, data)
	lines := strings.Split(strings.TrimSuffix(data, "\n"), "\n")
	for _, q := range []string{"needle", "Needle", "NEEDLE", "edl"} {
		m := newMatcher(q)
		var want []int
		for i, l := range lines {
			l = string(stripEscapes(nil, []byte(l)))
			if m.fold != foldNone {
				l = strings.ToLower(l)
			}
			if strings.Contains(l, string(m.pat)) {
				want = append(want, i)
			}
		}
		p.search = m
		var got []int
		for from := 0; from < len(lines); {
			line, err := p.scan(from, len(lines), false)
			if err != nil {
				t.Fatal(err)
			}
			if line < 0 {
				break
			}
			got = append(got, line)
			from = line + 1
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q forward: %v\nwant %v", q, got, want)
		}
		got = got[:0]
		for to := len(lines); to > 0; {
			line, err := p.scanBack(0, to)
			if err != nil {
				t.Fatal(err)
			}
			if line < 0 {
				break
			}
			got = append([]int{line}, got...)
			to = line
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%q backward: %v\nwant %v", q, got, want)
		}
	}
}

// TestPagerScanSmallChunks compares search with tiny read sizes, so matches
// fall across every kind of chunk cut, with a naive search per line.
func TestPagerScanSmallChunks(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	words := []string{"ab", "AB", "x", "abc", "\x1b[1m", "\x1b[0m", "é", "É", "Ab", "\t", " ", "cab", "aab"}
	var b strings.Builder
	for range 300 {
		for range r.IntN(40) {
			b.WriteString(words[r.IntN(len(words))])
		}
		if r.IntN(10) == 0 {
			b.WriteString("\r")
		}
		b.WriteByte('\n')
	}
	b.WriteString("last ab")
	data := b.String()
	p := pagerFile(t, data)
	lines := strings.Split(data, "\n")
	for _, q := range []string{"ab", "abc", "AB", "aab", "é", "éab", "Éa", "b\x1b", "x x"} {
		m := newMatcher(q)
		var want []int
		for i, l := range lines {
			l = string(stripEscapes(nil, []byte(l)))
			switch m.fold {
			case foldASCII:
				dst := make([]byte, len(l))
				lowerASCII(dst, []byte(l))
				l = string(dst)
			case foldUnicode:
				l = strings.ToLower(l)
			}
			if strings.Contains(l, string(m.pat)) {
				want = append(want, i)
			}
		}
		for _, chunk := range []int{1, 7, 16, 100, 4096} {
			p.search, p.chunk = m, chunk
			var got []int
			for from := 0; ; {
				line, err := p.scan(from, len(lines), false)
				if err != nil {
					t.Fatal(err)
				}
				if line < 0 {
					break
				}
				got = append(got, line)
				from = line + 1
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%q chunk %d forward: %v\nwant %v", q, chunk, got, want)
			}
			got = got[:0]
			for to := len(lines); ; {
				line, err := p.scanBack(0, to)
				if err != nil {
					t.Fatal(err)
				}
				if line < 0 {
					break
				}
				got = append([]int{line}, got...)
				to = line
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("%q chunk %d backward: %v\nwant %v", q, chunk, got, want)
			}
		}
	}
}

func TestPagerUnicodeFold(t *testing.T) {
	p := pagerFile(t, "x\nÉCOLE normale\nrien\nécole\n")
	pgSearch(t, p, "école")
	if p.matchLine != 1 {
		t.Fatalf("match %d", p.matchLine)
	}
	v := view(p, 40, 6, testStyles(false))
	if !strings.Contains(v, matchStyle(false).Render("ÉCOLE")) {
		t.Errorf("no highlight: %q", v)
	}
	pgPress(t, p, "n")
	if p.matchLine != 3 {
		t.Fatalf("n: %d", p.matchLine)
	}
}

func TestLowerASCII(t *testing.T) {
	var in []byte
	for c := range 256 {
		in = append(in, byte(c))
	}
	in = append(in, "Hello, WORLD — Été ZzAa@[`{"...)
	for off := range 9 {
		src := in[off:]
		dst := make([]byte, len(src))
		lowerASCII(dst, src)
		for i, c := range src {
			want := c
			if 'A' <= c && c <= 'Z' {
				want += 32
			}
			if dst[i] != want {
				t.Fatalf("byte %#x → %#x", c, dst[i])
			}
		}
	}
}

// pgBigFile writes about size bytes of `seq`-like lines and a last line
// "the end of ÉTÉ"; it returns the path and the line count.
func pgBigFile(b *testing.B, size int) (string, int) {
	b.Helper()
	path := filepath.Join(b.TempDir(), "big.txt")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	n, i := 0, 1
	var buf []byte
	for ; n < size; i++ {
		buf = strconv.AppendInt(buf[:0], int64(i), 10)
		buf = append(buf, '\n')
		w.Write(buf)
		n += len(buf)
	}
	w.WriteString("the end of ÉTÉ\n")
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return path, i
}

func BenchmarkPagerOpen100MB(b *testing.B) {
	path, lines := pgBigFile(b, 100<<20)
	b.SetBytes(100 << 20)
	b.ResetTimer()
	var p *Pager
	for b.Loop() {
		var err error
		if p, err = openPager(path, "big"); err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
	if p.idx.n != lines {
		b.Fatalf("%d lines, want %d", p.idx.n, lines)
	}
	b.ReportMetric(float64(p.idx.memory()), "index-bytes")
	b.ReportMetric(float64(lines), "lines")
}

func BenchmarkPagerView(b *testing.B) {
	st := testStyles(false)
	path, _ := pgBigFile(b, 100<<20)
	long := filepath.Join(b.TempDir(), "long.txt")
	line := strings.Repeat("0123456789 abcdefgh\t", 50<<10) // 1 MB lines
	if err := os.WriteFile(long, []byte(strings.Repeat(line+"\n", 40)), 0o644); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name, path string
		setup      func(p *Pager)
	}{
		{"seq-top", path, func(p *Pager) {}},
		{"seq-middle", path, func(p *Pager) { p.top = p.idx.n / 2 }},
		{"seq-search", path, func(p *Pager) { p.search = newMatcher("9"); p.top = p.idx.n / 3 }},
		{"1MB-lines", long, func(p *Pager) {}},
		{"1MB-lines-scrolled", long, func(p *Pager) { p.xOff = 30000 }},
		{"1MB-lines-wrap", long, func(p *Pager) { p.wrap = true; p.topRow = 100 }},
	} {
		b.Run(c.name, func(b *testing.B) {
			p, err := openPager(c.path, "bench")
			if err != nil {
				b.Fatal(err)
			}
			defer p.Close()
			p.SetSize(200, 50)
			c.setup(p)
			for b.Loop() {
				p.win = nil // read the lines every frame
				p.layout()  // what Update does for View
				_ = p.View(200, 50, st)
			}
		})
	}
}

func BenchmarkPagerSearch100MB(b *testing.B) {
	path, lines := pgBigFile(b, 100<<20)
	p, err := openPager(path, "big")
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	for _, c := range []struct{ name, q string }{
		{"digits", strconv.Itoa(lines - 1)}, // the number on the line before the last
		{"ascii-fold", "the end"},
		{"case-sensitive", "the end of ÉTÉ"},
		{"unicode-fold", "of été"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(100 << 20)
			for b.Loop() {
				p.top, p.matchLine, p.prompt, p.input = 0, -1, true, c.q
				p.promptKey(pgKey("enter"))
				if p.matchLine < lines-2 {
					b.Fatalf("match %d, msg %q", p.matchLine, p.msg)
				}
			}
		})
	}
}

// TestPagerColours: an artifact written for a UI keeps its text plain and
// its colours in the styles file; the pager shows them (also from the
// middle of a coloured stretch, under a search match's own look), and
// none under NO_COLOR.
func TestPagerColours(t *testing.T) {
	path := filepath.Join(t.TempDir(), "5.bash.log")
	s := sink.New(sink.Options{ArtifactPath: path, ArtifactID: "5", Styled: true, MaxBytes: 64})
	for i := range 50 {
		fmt.Fprintf(s, "\x1b[3%dmline %02d\x1b[0m plain \x1b[1mbold %s\x1b[0m\r\n", i%8, i, strings.Repeat("x", 60))
	}
	if sum := s.Dump(""); sum.ArtifactID != "5" {
		t.Fatalf("no artifact: %+v", sum)
	}
	p, err := openPager(path, "artifact://5")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	color := testStyles(false)
	rows := strings.Split(view(p, 100, 10, color), "\n")
	if !strings.Contains(rows[1], "\x1b[30mline 00\x1b[m plain \x1b[1mbold xxx") ||
		!strings.Contains(rows[2], "\x1b[31mline 01\x1b[m") {
		t.Errorf("rows:\n%q\n%q", rows[1], rows[2])
	}
	view(p, 40, 10, color)
	for range 30 {
		pgPress(t, p, "right")
	}
	rows = strings.Split(view(p, 40, 10, color), "\n")
	if p.xOff < 30 || !strings.Contains(rows[1], "\x1b[1mxxx") || strings.Contains(rows[1], "line") {
		t.Errorf("scrolled into a bold stretch: %q", rows[1])
	}
	if s := pgScreen(t, p, 100, 10, testStyles(true)); strings.Contains(strings.Join(s, "\n"), "\x1b") {
		t.Errorf("NO_COLOR: %q", s)
	}
	if b, _ := os.ReadFile(path); bytes.IndexByte(b, 0x1b) >= 0 {
		t.Error("the artifact holds escape sequences")
	}
}

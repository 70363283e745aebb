package pager

import (
	"fmt"
	"hash/maphash"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	tea "charm.land/bubbletea/v2"

	"agentsh/internal/sink"
)

var seed = maphash.MakeSeed()

// state prints everything p holds, the open file aside: every buffer to
// its capacity and where it lies, so that any write View made to the
// pager, a field or a cache, shows as a difference.
func state(p *Pager) string {
	var b []byte
	num := func(n uint64) { b = strconv.AppendUint(append(b, ' '), n, 16) }
	seen := map[uintptr]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer:
			switch {
			case v.IsNil():
				b = append(b, " nil"...)
			case v.Type() == reflect.TypeFor[*os.File]() || seen[v.Pointer()]:
				num(uint64(v.Pointer()))
			default:
				seen[v.Pointer()] = true
				walk(v.Elem())
			}
		case reflect.Struct:
			for i := range v.NumField() {
				walk(v.Field(i))
			}
		case reflect.Slice:
			if v.IsNil() {
				b = append(b, " nil"...)
				return
			}
			b = append(b, " ["...)
			num(uint64(v.Len()))
			num(uint64(v.Cap()))
			num(uint64(v.Pointer()))
			if et := v.Type().Elem(); plain(et) { // a hash of its memory
				num(maphash.Bytes(seed, unsafe.Slice((*byte)(v.UnsafePointer()), v.Cap()*int(et.Size()))))
			} else {
				full := v.Slice3(0, v.Cap(), v.Cap())
				for i := range full.Len() {
					walk(full.Index(i))
				}
			}
			b = append(b, ']')
		case reflect.Array:
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			var entries []string
			for it := v.MapRange(); it.Next(); {
				entries = append(entries, fmt.Sprint(it.Key().Int(), "=", it.Value().Int()))
			}
			slices.Sort(entries)
			b = append(b, fmt.Sprint(entries)...)
		case reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.String:
			b = strconv.AppendQuote(append(b, ' '), v.String())
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			num(uint64(v.Int()))
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
			num(v.Uint())
		case reflect.Bool:
			b = strconv.AppendBool(append(b, ' '), v.Bool())
		default:
			b = append(b, " "+v.Kind().String()...)
		}
	}
	walk(reflect.ValueOf(p))
	return string(b)
}

// plain reports whether t's values are numbers only, with no padding, so
// their memory is their value.
func plain(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Int,
		reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uint, reflect.Bool:
		return true
	case reflect.Struct:
		size := uintptr(0)
		for i := range t.NumField() {
			if !plain(t.Field(i).Type) {
				return false
			}
			size += t.Field(i).Type.Size()
		}
		return size == t.Size()
	}
	return false
}

// checkPureView draws p at its size and at another, in both looks, twice:
// the pager holds exactly what it held before, and a drawing at its size
// is the same each time.
func checkPureView(t *testing.T, p *Pager, what string) {
	t.Helper()
	// Empty the caches, so that a View that reads a line or lays out again
	// (even to the same frame) fills one.
	p.win, p.rowsOf, p.idx.cache = nil, nil, [len(p.idx.cache)]blockCache{}
	before := state(p)
	for _, st := range []Styles{testStyles(true), testStyles(false)} {
		a := p.View(p.width, p.height, st)
		_ = p.View(max(p.width-5, 1), p.height+3, st)
		if b := p.View(p.width, p.height, st); a != b {
			t.Fatalf("%s: two drawings differ:\n%s\n--\n%s", what, a, b)
		}
	}
	if after := state(p); after != before {
		i := 0
		for i < min(len(before), len(after)) && before[i] == after[i] {
			i++
		}
		t.Fatalf("%s: View changed the pager, from byte %d of its state:\nbefore %.200q\nafter  %.200q", what, i, before[i:], after[i:])
	}
}

// TestViewChangesNothing: View is a drawing of what Update laid out; in
// every mode (wrap, scrolled, a search, a prompt, colours, tiny windows)
// it leaves the pager as it found it.
func TestViewChangesNothing(t *testing.T) {
	styled := filepath.Join(t.TempDir(), "7.bash.log")
	s := sink.New(sink.Options{ArtifactPath: styled, ArtifactID: "7", Styled: true, MaxBytes: 64})
	for i := range 80 {
		fmt.Fprintf(s, "\x1b[3%dmline %02d\x1b[0m \t tab \x1b[1mbold %s 世界\x1b[0m\r\n", i%8, i, strings.Repeat("x", 90))
	}
	if sum := s.Dump(""); sum.ArtifactID != "7" {
		t.Fatalf("no artifact: %+v", sum)
	}
	var mixed strings.Builder
	mixed.WriteString(pgSeq(200))
	mixed.WriteString(strings.Repeat("long \x1b[32mgreen\x1b[0m 世界 tab\there ", 3000) + "\n")
	mixed.WriteString("get\n 10%\r 50%\r100%\n\x00\x07\xfe\xff é\u0301 👍🏽\n")
	mixed.WriteString(pgSeq(100))

	styledPager, err := openPager(styled, "artifact://7")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { styledPager.Close() })
	for name, p := range map[string]*Pager{"mixed": pagerFile(t, mixed.String()), "styled": styledPager, "empty": pagerFile(t, "")} {
		keys := []string{"j", "k", "pgdown", "pgup", "G", "g", "l", "h", "0", "w", "n", "N", "ctrl+d", "ctrl+u"}
		r := rand.New(rand.NewPCG(7, 8))
		sizes := [][2]int{{80, 24}, {1, 1}, {3, 2}, {12, 3}, {40, 10}, {200, 50}}
		for step := range 100 {
			switch k := keys[r.IntN(len(keys))]; {
			case step%25 == 0:
				pgSearch(t, p, []string{"green", "1", "世", "LINE", "zz"}[r.IntN(5)])
			case step%19 == 0:
				pgPress(t, p, "/")
				pgType(t, p, "half typed")
			case p.prompt:
				pgPress(t, p, "esc")
			default:
				pgPress(t, p, k)
			}
			if r.IntN(4) == 0 {
				p.Update(tea.MouseWheelMsg{Button: []tea.MouseButton{tea.MouseWheelDown, tea.MouseWheelRight}[r.IntN(2)]})
			}
			if r.IntN(10) == 0 {
				sz := sizes[r.IntN(len(sizes))]
				p.Update(tea.WindowSizeMsg{Width: sz[0], Height: sz[1]})
			}
			checkPureView(t, p, fmt.Sprintf("%s, step %d (wrap %t, top %d, row %d, col %d)", name, step, p.wrap, p.top, p.topRow, p.xOff))
		}
	}
}

// TestWindowSize: the pager lays out for the size a tea.WindowSizeMsg
// gives, and a size with no room keeps the last one.
func TestWindowSize(t *testing.T) {
	p := pagerFile(t, pgSeq(100))
	st := testStyles(true)
	p.Update(tea.WindowSizeMsg{Width: 30, Height: 7})
	if got := strings.Split(p.View(30, 7, st), "\n"); len(got) != 7 || !strings.Contains(got[0], "line 1–5 of 100") {
		t.Fatalf("30x7: %q", got)
	}
	pgPress(t, p, "pgdown") // a page is the body's 5 rows
	if got := strings.Split(p.View(30, 7, st), "\n"); !strings.Contains(got[0], "line 6–10 of 100") {
		t.Fatalf("pgdown: %q", got[0])
	}
	p.Update(tea.WindowSizeMsg{Width: 0, Height: 0})
	if p.width != 30 || p.height != 7 {
		t.Errorf("a 0x0 window changed the layout to %dx%d", p.width, p.height)
	}
}

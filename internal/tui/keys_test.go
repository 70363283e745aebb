package tui

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"charm.land/bubbles/v2/key"
	tea "charm.land/bubbletea/v2"
)

// bindings is every binding of km, by "surface.Name".
func bindings(km keyMap) map[string]key.Binding {
	out := map[string]key.Binding{}
	v := reflect.ValueOf(km)
	for i := range v.NumField() {
		group := v.Field(i)
		for j := range group.NumField() {
			b := group.Field(j).Interface().(key.Binding)
			out[v.Type().Field(i).Name+"."+group.Type().Field(j).Name] = b
		}
	}
	return out
}

// Every binding has keys and help, and /help lists it.
func TestHelpListsEveryBinding(t *testing.T) {
	text := helpText()
	for n, b := range bindings(keys) {
		h := b.Help()
		if len(b.Keys()) == 0 || h.Key == "" || h.Desc == "" {
			t.Errorf("%s: keys %q, help %+v", n, b.Keys(), h)
			continue
		}
		if !strings.Contains(text, h.Key) && !strings.Contains(text, b.Keys()[0]) {
			t.Errorf("/help does not name %s (%q)", n, h.Key)
		}
	}
	for _, want := range []string{"Conversation\n  enter ", "  ctrl+t, /jobs ", "Quit question\n  y ", "Session picker (/resume)\n  ↑ ", "  /resume ",
		"  a paste    keeps its tabs; over 10 lines or 1000 characters it shows as [pasted N lines], which backspace removes whole (the full text is sent)\n"} {
		if !strings.Contains(text, want) {
			t.Errorf("/help lacks %q:\n%s", want, text)
		}
	}
}

// The key map is the one place a key is named: rebinding a key moves what
// it does and every hint that names it.
func TestRebindingMovesKeysAndHints(t *testing.T) {
	t.Cleanup(func() { keys = newKeyMap() })
	keys.Main.Jobs = bind("f2 or /jobs:", "jobs", "f2")
	keys.Panel.Attach = bind("enter", "attach", "enter")
	keys.Panel.Output = bind("o", "full output", "o")
	keys.Overlay.Kill = bind("ctrl+x", "force-kill", "ctrl+x")

	h := newHarness(t, 100, 30)
	if s := helpText(); !strings.Contains(s, "f2, /jobs ") {
		t.Errorf("/help does not follow the map:\n%s", s)
	}
	mgr := withJobs(h)
	j := startJob(t, mgr, "cat")
	waitJob(t, j, "waiting for input")
	h.press('t', tea.ModCtrl)
	if layerOn[*jobsPanel](h) != nil {
		t.Fatal("the old key still opens the jobs panel")
	}
	h.press(tea.KeyF2, 0)
	if layerOn[*jobsPanel](h) == nil {
		t.Fatal("f2 does not open the jobs panel")
	}
	if s := h.statusLine(); !strings.Contains(s, "enter attach") || !strings.Contains(s, "o full output") {
		t.Errorf("the panel's footer does not follow the map: %q", s)
	}
	h.press(tea.KeyEnter, 0)
	if layerOn[*jobAttach](h) == nil {
		t.Fatalf("enter, bound to attach, did not attach:\n%s", h.screen())
	}

	if !strings.Contains(overlayFooterText(false, false), "ctrl+x force-kill") {
		t.Errorf("overlay footer %q", overlayFooterText(false, false))
	}
}

// No key is spelled out where input is handled: a string literal compared
// with a key's String() (in a switch or with ==) outside keys.go (and the
// pager's pager/keys.go, which the map takes its keys from) is a key that
// the map, and so the help, does not know.
func TestNoKeyLiteralsOutsideTheMap(t *testing.T) {
	var files []string
	for _, pat := range []string{"*.go", "pager/*.go"} {
		fs, err := filepath.Glob(pat)
		if err != nil || len(fs) == 0 {
			t.Fatalf("%s: %v %v", pat, fs, err)
		}
		files = append(files, fs...)
	}
	fset := token.NewFileSet()
	isString := func(e ast.Expr) bool {
		c, ok := e.(*ast.CallExpr)
		if !ok || len(c.Args) != 0 {
			return false
		}
		s, ok := c.Fun.(*ast.SelectorExpr)
		return ok && s.Sel.Name == "String"
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "keys.go" || f == filepath.Join("pager", "keys.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		file, err := parser.ParseFile(fset, f, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(file, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SwitchStmt:
				if n.Tag == nil || !isString(n.Tag) {
					return true
				}
				for _, st := range n.Body.List {
					for _, e := range st.(*ast.CaseClause).List {
						if lit, ok := e.(*ast.BasicLit); ok && lit.Kind == token.STRING {
							t.Errorf("%s: key %s in a switch on String()", fset.Position(lit.Pos()), lit.Value)
						}
					}
				}
			case *ast.BinaryExpr:
				if n.Op != token.EQL && n.Op != token.NEQ {
					return true
				}
				for _, pair := range [][2]ast.Expr{{n.X, n.Y}, {n.Y, n.X}} {
					if lit, ok := pair[1].(*ast.BasicLit); ok && lit.Kind == token.STRING && isString(pair[0]) {
						v, _ := strconv.Unquote(lit.Value)
						t.Errorf("%s: key %q compared with String()", fset.Position(lit.Pos()), v)
					}
				}
			}
			return true
		})
	}
}

package rpc

import (
	"encoding/json"
	"errors"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// docsCommands reads docs/rpc.md's table of all commands: each command's
// name and its request fields (nil when the table points elsewhere, as for
// the job commands).
func docsCommands(t *testing.T) map[string][]string {
	t.Helper()
	b, err := os.ReadFile("../../docs/rpc.md")
	if err != nil {
		t.Fatal(err)
	}
	_, after, ok := strings.Cut(string(b), "\n### All commands\n")
	if !ok {
		t.Fatal(`docs/rpc.md has no "### All commands" section`)
	}
	section, _, _ := strings.Cut(after, "\n#")
	code := regexp.MustCompile("`([^`]*)`")
	parens := regexp.MustCompile(`\([^)]*\)`)
	docs := map[string][]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, " | ")
		if !strings.HasPrefix(line, "| `") || len(cells) < 3 {
			continue
		}
		var fields []string
		if !strings.Contains(cells[1], "see ") {
			fields = []string{}
			for _, m := range code.FindAllStringSubmatch(parens.ReplaceAllString(cells[1], ""), -1) {
				fields = append(fields, strings.TrimSuffix(m[1], "?"))
			}
			slices.Sort(fields)
		}
		for _, m := range code.FindAllStringSubmatch(cells[0], -1) {
			if _, dup := docs[m[1]]; dup {
				t.Errorf("docs/rpc.md lists %s twice", m[1])
			}
			docs[m[1]] = fields
		}
	}
	return docs
}

// paramNames are the JSON names of a parameter type's fields, sorted.
func paramNames(p reflect.Type) []string {
	names := []string{}
	for i := range p.NumField() {
		if f := p.Field(i); f.IsExported() {
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return names
}

// TestTableMatchesDocs: docs/rpc.md lists every command of the table and
// no other, each with the fields of its parameter type.
func TestTableMatchesDocs(t *testing.T) {
	docs := docsCommands(t)
	var documented []string
	for name := range docs {
		documented = append(documented, name)
	}
	slices.Sort(documented)
	if got := commandNames(); !slices.Equal(got, documented) {
		t.Fatalf("the table has\n%v\ndocs/rpc.md lists\n%v", got, documented)
	}
	for name, fields := range docs {
		if fields == nil {
			continue
		}
		if got := paramNames(commands[name].params); !slices.Equal(got, fields) {
			t.Errorf("%s takes %v, docs/rpc.md says %v", name, got, fields)
		}
	}
}

// TestWireRefusesTwoTypesOfAField: two commands cannot give one JSON name
// two types (a line's field would have no one type to be checked against).
func TestWireRefusesTwoTypesOfAField(t *testing.T) {
	type a struct {
		Limit *float64 `json:"limit"`
	}
	type b struct {
		Limit *string `json:"limit"`
	}
	run := func(*server, *command, *a) {}
	runB := func(*server, *command, *b) {}
	if _, err := buildWire(map[string]*handler{"a": cmd("a", run), "b": cmd("b", runB)}); err == nil ||
		!strings.Contains(err.Error(), `"limit"`) {
		t.Errorf("buildWire of a conflict: %v", err)
	}
	type untagged struct{ Limit *float64 }
	if _, err := buildWire(map[string]*handler{"u": cmd("u", func(*server, *command, *untagged) {})}); err == nil {
		t.Error("buildWire took a field without a json name")
	}
	type upper struct {
		Limit *float64 `json:"Limit"`
	}
	if _, err := buildWire(map[string]*handler{"a": cmd("a", run), "u": cmd("u", func(*server, *command, *upper) {})}); err == nil {
		t.Error("buildWire took two names that differ only in case")
	}
	w, err := buildWire(map[string]*handler{"a": cmd("a", run), "a2": cmd("a2", run)})
	if err != nil || w.typ.NumField() != 3 || !slices.Equal(w.from["a"], []int{2}) || !slices.Equal(w.from["a2"], []int{2}) {
		t.Errorf("buildWire of one field twice: %+v, %v", w, err)
	}
}

// TestParseDecodesParams: a known command's line is decoded into its own
// parameter type, unknown fields ignored, and its id kept raw.
func TestParseDecodesParams(t *testing.T) {
	c, err := parseCommand([]byte(`{"id":[1, 2],"type":"get_messages_page","limit":3,"cursor":"x","message":"other's"}`))
	if err != nil {
		t.Fatal(err)
	}
	p, ok := c.params.(*messagesPageParams)
	if !ok || c.handler != commands[CmdGetMessagesPage] || c.Type != CmdGetMessagesPage || string(c.ID) != `[1, 2]` {
		t.Fatalf("parsed %+v", c)
	}
	if p.Limit == nil || *p.Limit != 3 || p.Cursor == nil || *p.Cursor != "x" {
		t.Errorf("params %+v", p)
	}
	c, err = parseCommand([]byte(`{"type":"nope","id":null}`))
	if err != nil || c.handler != nil || c.params != nil || c.ID != nil || c.Type != "nope" {
		t.Errorf("unknown command parsed as %+v, %v", c, err)
	}
	var te *json.UnmarshalTypeError
	if _, err = parseCommand([]byte(`{"type":"abort","limit":"x"}`)); err == nil || !errors.As(err, &te) || te.Struct != "command" {
		t.Errorf("a wrongly typed field of another command: %v", err)
	}
}

// TestAnsweredDuringFileWork: while file work runs, only get_state and the
// aborts are answered at once (docs/rpc.md, "Concurrency").
func TestAnsweredDuringFileWork(t *testing.T) {
	var got []string
	for _, name := range commandNames() {
		if commands[name].duringFileWork {
			got = append(got, name)
		}
	}
	if want := []string{CmdAbort, CmdAbortBash, CmdGetState}; !slices.Equal(got, want) {
		t.Errorf("answered during file work: %v, want %v", got, want)
	}
}

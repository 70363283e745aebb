package rpc

// The command table: each command is a handler with its own parameter
// type, registered by the file of its topic (prompt.go, session_cmds.go,
// state.go, models.go, bash.go, jobs.go, sandbox.go, compact.go,
// export.go), next to its code. A line is decoded once, into the wire
// struct built from the table, which holds the id, the type and every
// field of every command, so that a field of the wrong type fails the
// line whatever its command (the protocol has always answered so); then,
// for a known type, the command's fields are copied into its own
// parameters.

import (
	"encoding/json"
	"errors"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// command is one input line: its id, kept raw so it is echoed exactly,
// its type, and its parameters (nil handler: the type is unknown).
type command struct {
	ID      json.RawMessage
	Type    string
	handler *handler
	params  any // a *P of the handler's parameter type P
}

// handler is one command of the table.
type handler struct {
	name   string
	params reflect.Type // P, a struct of tagged fields
	// run checks and runs the command; for file work that goes on beside
	// the loop it returns a channel closed at its end (nil for anything
	// else).
	run func(s *server, c *command) <-chan struct{}
	// duringFileWork: answered at once while file work runs (Serve), as
	// it reads the state or stops work, and nothing it does depends on
	// the file work's outcome.
	duringFileWork bool
}

// checker is a parameter type whose fields are checked before its
// command runs (only checks that come first whatever the server's state:
// the order of a command's errors is part of the protocol).
type checker interface {
	check() error
}

// noParams is the parameter type of a command that takes none.
type noParams struct{}

// cmd is the handler of a command answered on the loop (or by work run
// starts in its own goroutine).
func cmd[P any](name string, run func(s *server, c *command, p *P)) *handler {
	return fileCmd(name, func(s *server, c *command, p *P) <-chan struct{} {
		run(s, c, p)
		return nil
	})
}

// fileCmd is the handler of a command whose work may go on beside the
// loop: run returns the channel closed at its end (nil: none).
func fileCmd[P any](name string, run func(s *server, c *command, p *P) <-chan struct{}) *handler {
	return &handler{
		name:   name,
		params: reflect.TypeFor[P](),
		run: func(s *server, c *command) <-chan struct{} {
			p := c.params.(*P)
			if ch, ok := any(p).(checker); ok {
				if err := ch.check(); err != nil {
					s.fail(c, err)
					return nil
				}
			}
			return run(s, c, p)
		},
	}
}

// answeredDuringFileWork marks h as answered at once while file work
// runs.
func (h *handler) answeredDuringFileWork() *handler {
	h.duringFileWork = true
	return h
}

// commands is the table, filled by the topic files' init functions.
var commands = map[string]*handler{}

// register adds handlers to the table.
func register(hs ...*handler) {
	for _, h := range hs {
		if _, dup := commands[h.name]; dup {
			panic("rpc: command " + h.name + " registered twice")
		}
		commands[h.name] = h
	}
}

// commandNames lists the table's commands, sorted.
func commandNames() []string {
	names := make([]string, 0, len(commands))
	for name := range commands {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// wire is the struct every line is decoded into first: field 0 the id,
// field 1 the type, then the fields of every command's parameters, one
// per JSON name; from[name][i] is the wire field of field i of the
// parameters of command name (-1: unexported, the handler's own).
type wire struct {
	typ  reflect.Type
	from map[string][]int
}

// theWire is the table's wire, built once, after every init has
// registered.
var theWire = sync.OnceValue(func() *wire {
	w, err := buildWire(commands)
	if err != nil {
		panic(err)
	}
	return w
})

// buildWire makes the wire struct of table: two commands' fields of one
// JSON name must have one type, and two JSON names must differ in more
// than case (a key is matched to a field regardless of case).
func buildWire(table map[string]*handler) (*wire, error) {
	fields := []reflect.StructField{
		{Name: "ID", Type: reflect.TypeFor[json.RawMessage](), Tag: `json:"id"`},
		{Name: "Type", Type: reflect.TypeFor[*string](), Tag: `json:"type"`},
	}
	index := map[string]int{"id": 0, "type": 1}      // JSON name → wire field
	owner := map[string]string{"id": "", "type": ""} // JSON name → the command that brought it
	folded := map[string]string{"id": "id", "type": "type"}
	w := &wire{from: map[string][]int{}}
	for _, name := range slices.Sorted(maps.Keys(table)) {
		pt := table[name].params
		if pt.Kind() != reflect.Struct {
			return nil, errors.New("rpc: the parameters of " + name + " are not a struct")
		}
		from := make([]int, pt.NumField())
		for i := range pt.NumField() {
			f := pt.Field(i)
			from[i] = -1
			if !f.IsExported() {
				continue // the handler's own (a check's result)
			}
			key, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if f.Anonymous || key == "" || key == "-" {
				return nil, errors.New("rpc: field " + f.Name + " of " + name + "'s parameters needs a json name")
			}
			if j, ok := index[key]; ok {
				if t := fields[j].Type; t != f.Type {
					return nil, errors.New("rpc: " + name + "'s " + strconv.Quote(key) + " is a " + f.Type.String() +
						", another command's (" + owner[key] + ") a " + t.String())
				}
				from[i] = j
				continue
			}
			if other, ok := folded[strings.ToLower(key)]; ok {
				return nil, errors.New("rpc: " + name + "'s " + strconv.Quote(key) + " differs only in case from " + strconv.Quote(other))
			}
			index[key], owner[key], folded[strings.ToLower(key)] = len(fields), name, key
			from[i] = len(fields)
			fields = append(fields, reflect.StructField{Name: "F" + strconv.Itoa(len(fields)), Type: f.Type, Tag: reflect.StructTag(`json:"` + key + `"`)})
		}
		w.from[name] = from
	}
	w.typ = reflect.StructOf(fields)
	return w, nil
}

// parseCommand decodes one (non-blank) line: into the wire struct, then,
// for a known type, its fields into the command's own parameters.
func parseCommand(line []byte) (*command, error) {
	w := theWire()
	v := reflect.New(w.typ).Elem()
	if err := json.Unmarshal(line, v.Addr().Interface()); err != nil {
		return nil, wireError(err)
	}
	typ := v.Field(1).Interface().(*string)
	if typ == nil {
		return nil, errors.New(`missing "type"`)
	}
	c := &command{ID: json.RawMessage(v.Field(0).Bytes()), Type: *typ}
	if string(c.ID) == "null" {
		c.ID = nil
	}
	if h := commands[c.Type]; h != nil {
		p := reflect.New(h.params)
		for i, j := range w.from[c.Type] {
			if j >= 0 {
				p.Elem().Field(i).Set(v.Field(j))
			}
		}
		c.handler, c.params = h, p.Interface()
	}
	return c, nil
}

// wireError words a type error as the protocol always has, when one
// struct named command held every field: "Go struct field
// command.message", "Go value of type rpc.command".
func wireError(err error) error {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return err
	}
	e := *te
	switch {
	case e.Struct != "" || e.Field != "":
		e.Struct = "command"
	case e.Type.Kind() == reflect.Struct: // the line is not an object
		e.Type = reflect.TypeFor[command]()
	}
	return &e
}

// dispatch runs one command. For file work that goes on beside the loop
// it returns a channel closed at its end (nil for anything else).
func (s *server) dispatch(c *command) (fileDone <-chan struct{}) {
	if c.handler == nil {
		// The id lets the client fail the call at once instead of waiting.
		s.fail(c, errors.New("Unknown command: "+c.Type))
		return nil
	}
	return c.handler.run(s, c)
}

// answersDuringFileWork reports whether c is handled at once while file
// work runs (Serve).
func answersDuringFileWork(c *command) bool {
	return c.handler != nil && c.handler.duringFileWork
}

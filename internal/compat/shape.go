package compat

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Shape is the form of a JSON value with the values that legitimately
// differ between two agents (ids, times, names, paths, token counts, texts)
// left out: the JSON types it had and, for objects, its fields' shapes; for
// arrays, the union of its elements' shapes, one variant per element
// "type" (or "role"). The values of the keys in keptValues stay, since a
// client branches on them.
type Shape struct {
	Kinds  map[string]bool   // "object", "array", "string", "number", "bool", "null"
	Values map[string]bool   // the kept values, for the keys in keptValues
	Fields map[string]*Shape // object fields
	Elems  map[string]*Shape // array elements by variant
}

// keptValues are the keys whose values are part of the shape.
var keptValues = map[string]bool{"type": true, "role": true, "command": true, "success": true, "stopReason": true}

// ShapeOf gives the shape of v, a value decoded by encoding/json.
func ShapeOf(v any) *Shape { return shapeOf(v, "") }

func shapeOf(v any, key string) *Shape {
	s := &Shape{Kinds: map[string]bool{}}
	switch v := v.(type) {
	case map[string]any:
		s.Kinds["object"] = true
		s.Fields = map[string]*Shape{}
		for k, fv := range v {
			s.Fields[k] = shapeOf(fv, k)
		}
	case []any:
		s.Kinds["array"] = true
		s.Elems = map[string]*Shape{}
		for _, e := range v {
			variant := variantOf(e)
			s.Elems[variant] = s.Elems[variant].merge(shapeOf(e, ""))
		}
	case string:
		s.Kinds["string"] = true
		s.keep(key, v)
	case float64:
		s.Kinds["number"] = true
	case bool:
		s.Kinds["bool"] = true
		s.keep(key, fmt.Sprint(v))
	case nil:
		s.Kinds["null"] = true
	}
	return s
}

func (s *Shape) keep(key, v string) {
	if keptValues[key] {
		s.Values = map[string]bool{v: true}
	}
}

// variantOf names an array element's variant: an object's "type" or
// "role", else its JSON kind.
func variantOf(e any) string {
	if m, ok := e.(map[string]any); ok {
		for _, k := range []string{"type", "role"} {
			if s, ok := m[k].(string); ok {
				return s
			}
		}
		return "object"
	}
	for k := range shapeOf(e, "").Kinds {
		return k
	}
	return "?"
}

// merge returns the union of s and o (either may be nil).
func (s *Shape) merge(o *Shape) *Shape {
	if s == nil {
		return o
	}
	if o == nil {
		return s
	}
	out := &Shape{Kinds: union(s.Kinds, o.Kinds)}
	if s.Values != nil || o.Values != nil {
		out.Values = union(s.Values, o.Values)
	}
	if s.Fields != nil || o.Fields != nil {
		out.Fields = map[string]*Shape{}
		for k, v := range s.Fields {
			out.Fields[k] = v
		}
		for k, v := range o.Fields {
			out.Fields[k] = out.Fields[k].merge(v)
		}
	}
	if s.Elems != nil || o.Elems != nil {
		out.Elems = map[string]*Shape{}
		for k, v := range s.Elems {
			out.Elems[k] = v
		}
		for k, v := range o.Elems {
			out.Elems[k] = out.Elems[k].merge(v)
		}
	}
	return out
}

func union(a, b map[string]bool) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

func setString(m map[string]bool) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return strings.Join(ks, "|")
}

// Contains lists how got (agentsh's) fails to contain want (omp's): fields
// of want missing from got, JSON types or kept values of want that got does
// not have, array variants got lacks. Paths in allow are not required.
func Contains(want, got *Shape, path string, allow []Allowed) []string {
	if isAllowed(path, allow) {
		return nil
	}
	if got == nil {
		return []string{"missing " + path}
	}
	var out []string
	for k := range want.Kinds {
		if !got.Kinds[k] {
			out = append(out, fmt.Sprintf("type %s: omp %s, agentsh %s", path, setString(want.Kinds), setString(got.Kinds)))
			break
		}
	}
	for v := range want.Values {
		if !got.Values[v] {
			out = append(out, fmt.Sprintf("value %s: omp %s, agentsh %s", path, setString(want.Values), setString(got.Values)))
			break
		}
	}
	for _, k := range sortedKeys(want.Fields) {
		if got.Fields == nil {
			if got.Kinds["object"] || len(out) == 0 {
				out = append(out, "missing "+path+"."+k)
			}
			continue
		}
		out = append(out, Contains(want.Fields[k], got.Fields[k], path+"."+k, allow)...)
	}
	for _, k := range sortedKeys(want.Elems) {
		p := path + "[" + k + "]"
		if got.Kinds["array"] && len(got.Elems) == 0 {
			out = append(out, "empty "+path+": omp has "+k+" elements, agentsh none")
			break
		}
		if got.Elems == nil {
			continue
		}
		out = append(out, Contains(want.Elems[k], got.Elems[k], p, allow)...)
	}
	return out
}

func sortedKeys(m map[string]*Shape) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// Allowed is a field or event of omp that agentsh need not produce.
type Allowed struct {
	// Pattern is a path suffix (".attribution" matches that field at any
	// depth; "[toolCall].partialArgs" that field of toolCall blocks;
	// "message_start(assistant):.message.content" that field of one kind
	// of line only), a
	// subtree (".details.*": every field inside details, not details), or
	// "event:KEY" for a whole line kind.
	Pattern string
	Why     string
}

func isAllowed(path string, allow []Allowed) bool {
	for _, a := range allow {
		switch {
		case strings.HasPrefix(a.Pattern, "event:"):
		case strings.HasSuffix(a.Pattern, ".*"):
			if strings.Contains(path, strings.TrimSuffix(a.Pattern, "*")) {
				return true
			}
		case strings.HasSuffix(path, a.Pattern):
			return true
		}
	}
	return false
}

func isAllowedEvent(key string, allow []Allowed) bool {
	for _, a := range allow {
		if a.Pattern == "event:"+key {
			return true
		}
	}
	return false
}

// LineKey names a transcript line for matching and ordering: its type, with
// the message role (message_start/_end, session message entries), the
// assistantMessageEvent's type (message_update) or the command (response).
func LineKey(m map[string]any) string {
	t, _ := m["type"].(string)
	switch t {
	case "message_start", "message_end", "message":
		if msg, ok := m["message"].(map[string]any); ok {
			return fmt.Sprintf("%s(%v)", t, msg["role"])
		}
	case "message_update":
		if e, ok := m["assistantMessageEvent"].(map[string]any); ok {
			return fmt.Sprintf("%s(%v)", t, e["type"])
		}
	case "response":
		return fmt.Sprintf("%s(%v)", t, m["command"])
	}
	return t
}

// entry is one kind of line in a segment; consecutive lines of one kind
// are one entry with their shapes merged (an agent may stream a text in
// one delta or in three).
type entry struct {
	key   string
	shape *Shape
}

// segment is what an agent wrote after one command (or before the first).
type segment struct {
	name    string
	entries []entry
}

// segments splits a transcript at the commands sent; filter picks the
// lines compared (nil: all).
func segments(tr []Line, allow []Allowed, filter func(map[string]any) bool) ([]segment, error) {
	segs := []segment{{name: "start"}}
	for _, l := range tr {
		var v any
		if err := json.Unmarshal(l.Data, &v); err != nil {
			return nil, fmt.Errorf("transcript line %s: %w", l.Data, err)
		}
		if l.Dir == "in" {
			name := "prompt"
			if m, ok := v.(map[string]any); ok {
				name = fmt.Sprint(m["type"])
			}
			segs = append(segs, segment{name: name})
			continue
		}
		m, ok := v.(map[string]any)
		key := "(not an object)"
		if ok {
			if filter != nil && !filter(m) {
				continue
			}
			key = LineKey(m)
		}
		if isAllowedEvent(key, allow) {
			continue
		}
		seg := &segs[len(segs)-1]
		if n := len(seg.entries); n > 0 && seg.entries[n-1].key == key {
			seg.entries[n-1].shape = seg.entries[n-1].shape.merge(ShapeOf(v))
			continue
		}
		seg.entries = append(seg.entries, entry{key: key, shape: ShapeOf(v)})
	}
	return segs, nil
}

// Compare checks that the transcript got (agentsh's) has the shapes of
// want (omp's), command by command: every line kind omp wrote, with every
// field omp's had (but those allowed), and the events in omp's order
// (responses are left out of the order: two commands in flight may answer
// in either order). It returns the differences, one per line, grouped by
// command; none when got contains want.
func Compare(want, got []Line, allow []Allowed, filter func(map[string]any) bool) ([]string, error) {
	ws, err := segments(want, allow, filter)
	if err != nil {
		return nil, fmt.Errorf("omp: %w", err)
	}
	gs, err := segments(got, allow, filter)
	if err != nil {
		return nil, fmt.Errorf("agentsh: %w", err)
	}
	var out []string
	if len(ws) != len(gs) {
		out = append(out, fmt.Sprintf("commands: omp transcript has %d, agentsh's %d", len(ws)-1, len(gs)-1))
	}
	for i := 0; i < len(ws) && i < len(gs); i++ {
		w, g := ws[i], gs[i]
		name := fmt.Sprintf("#%d %s", i, w.name)
		if wo, gotOrder := order(w), order(g); !slices.Equal(wo, gotOrder) {
			out = append(out, fmt.Sprintf("%s: event order:\n      omp     %s\n      agentsh %s", name, strings.Join(wo, " "), strings.Join(gotOrder, " ")))
		}
		// The n-th entry of a kind in omp's segment against the n-th of
		// that kind in agentsh's; problems said once per kind.
		seen := map[string]int{}
		said := map[string]bool{}
		for _, we := range w.entries {
			n := seen[we.key]
			seen[we.key]++
			ge := nth(g, we.key, n)
			if ge == nil {
				if n == 0 || nth(g, we.key, 0) == nil {
					if !said[we.key+" missing"] {
						out = append(out, fmt.Sprintf("%s: agentsh writes no %s", name, we.key))
						said[we.key+" missing"] = true
					}
				}
				continue
			}
			if we.shape.Fields["success"] != nil && ge.shape.Fields["success"] != nil &&
				we.shape.Fields["success"].Values["true"] && !ge.shape.Fields["success"].Values["true"] {
				out = append(out, fmt.Sprintf("%s: %s: omp succeeds, agentsh answers an error", name, we.key))
				continue
			}
			// The path starts with the line's key, so an allow-list entry
			// can name a field of one kind of line only ("KEY:.path").
			for _, p := range Contains(we.shape, ge.shape, we.key+":", allow) {
				p = strings.Replace(p, we.key+":", "", 1)
				if said[we.key+p] {
					continue
				}
				said[we.key+p] = true
				out = append(out, fmt.Sprintf("%s: %s: %s", name, we.key, p))
			}
		}
	}
	return out, nil
}

func order(s segment) []string {
	var out []string
	for _, e := range s.entries {
		if !strings.HasPrefix(e.key, "response(") {
			out = append(out, e.key)
		}
	}
	return out
}

func nth(s segment, key string, n int) *entry {
	for i := range s.entries {
		if s.entries[i].key == key {
			if n == 0 {
				return &s.entries[i]
			}
			n--
		}
	}
	return nil
}

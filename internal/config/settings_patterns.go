package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"agentsh/internal/bash"
)

// bash.patterns, the rules the approvals apply: a list of rules, each an object with
// exactly one of "allow", "ask" or "deny" and the pattern as its value:
//
//	"bash": {"patterns": [{"deny": "git push --force"}, {"ask": "npm publish"}, {"allow": "git push"}]}
//
// A pattern is a command prefix or a /regex/ (bash.PatternRule). Unlike
// every other array, the files' lists add up: the project file's rules
// come after the global file's, never instead of them, so a project (which
// the model may write) cannot drop the user's deny rules.

// patternActions are the keys a rule may have.
var patternActions = []bash.PatternAction{bash.PatternAllow, bash.PatternAsk, bash.PatternDeny}

// validateBashPatterns checks bash.patterns in one file's tree.
func validateBashPatterns(bashObj map[string]any, fail func(key, msg string) error) error {
	v, ok := bashObj["patterns"]
	if !ok || v == nil {
		return nil
	}
	arr, ok := v.([]any)
	if !ok {
		return fail("bash.patterns", "expected array of objects, got "+jsonKind(v))
	}
	for i, el := range arr {
		base := "bash.patterns[" + strconv.Itoa(i) + "]"
		obj, ok := el.(map[string]any)
		if !ok {
			return fail(base, "expected object, got "+jsonKind(el))
		}
		if len(obj) != 1 {
			return fail(base, `must have exactly one of "allow", "ask" or "deny"`)
		}
		for k, pv := range obj {
			if !knownAction(k) {
				return fail(base+"."+k, `unknown action (want "allow", "ask" or "deny")`)
			}
			p, ok := pv.(string)
			if !ok {
				return fail(base+"."+k, "expected string, got "+jsonKind(pv))
			}
			if err := bash.ValidPattern(p); err != nil {
				return fail(base+"."+k, err.Error())
			}
		}
	}
	return nil
}

func knownAction(k string) bool {
	for _, a := range patternActions {
		if string(a) == k {
			return true
		}
	}
	return false
}

// patternRules converts a validated bash.patterns array.
func patternRules(v any) []bash.PatternRule {
	arr, _ := v.([]any)
	rules := make([]bash.PatternRule, 0, len(arr))
	for _, el := range arr {
		obj, _ := el.(map[string]any)
		for k, pv := range obj {
			p, _ := pv.(string)
			rules = append(rules, bash.PatternRule{Action: bash.PatternAction(k), Pattern: p})
		}
	}
	return rules
}

// treePatterns are the bash.patterns rules of one file's parsed tree.
// The files' lists add up (global first): a project's list never takes a
// global deny or ask rule away, not even [].
func treePatterns(tree map[string]any) []bash.PatternRule {
	b, _ := tree["bash"].(map[string]any)
	if b == nil || b["patterns"] == nil {
		return nil
	}
	return patternRules(b["patterns"])
}

// ProjectPatternRules are the bash.patterns rules of the settings file at
// path (the project's): what /permissions lists. A missing file has none.
func ProjectPatternRules(path string) ([]bash.PatternRule, error) {
	tree, err := readSettingsTree(path)
	if err != nil {
		return nil, err
	}
	v, _ := patternsIn(tree)
	return patternRules(v), nil
}

// RemovePatternRule takes rule i (as ProjectPatternRules numbers them) out
// of the settings file at path, after checking that it still is r (the file
// may have changed since it was listed).
func RemovePatternRule(path string, i int, r bash.PatternRule) error {
	return editPatterns(path, func(rules []any) ([]any, error) {
		if i < 0 || i >= len(rules) {
			return nil, fmt.Errorf("no rule %d in %s", i+1, path)
		}
		if got := patternRules([]any{rules[i]}); len(got) != 1 || got[0] != r {
			return nil, fmt.Errorf("%s changed: rule %d is no longer %s", path, i+1, r)
		}
		return append(rules[:i:i], rules[i+1:]...), nil
	})
}

// readSettingsTree reads one settings file as parsed and validated JSON;
// a missing file is an empty tree.
func readSettingsTree(path string) (map[string]any, error) {
	data, err := readSettingsFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]any{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("settings: %w", err)
	}
	if _, err := parseSettingsFile(path, data); err != nil {
		return nil, err
	}
	tree := map[string]any{}
	if len(bytes.TrimSpace(data)) > 0 {
		if err := json.Unmarshal(bytes.TrimPrefix(data, []byte("\xef\xbb\xbf")), &tree); err != nil {
			return nil, fmt.Errorf("settings: %s: %w", path, err)
		}
	}
	return tree, nil
}

// patternsIn finds bash.patterns in a file's tree as written, nested or as a
// dotted key; set stores a new value where it was found (nested when absent).
func patternsIn(tree map[string]any) (v any, set func(any)) {
	if v, ok := tree["bash.patterns"]; ok {
		return v, func(n any) { tree["bash.patterns"] = n }
	}
	b, _ := tree["bash"].(map[string]any)
	if b == nil {
		return nil, func(n any) { tree["bash"] = map[string]any{"patterns": n} }
	}
	return b["patterns"], func(n any) { b["patterns"] = n }
}

// editPatterns rewrites bash.patterns of the file at path with edit; the
// result must still load as settings, or the file is left alone.
func editPatterns(path string, edit func([]any) ([]any, error)) error {
	tree, err := readSettingsTree(path)
	if err != nil {
		return err
	}
	v, set := patternsIn(tree)
	rules, _ := v.([]any)
	rules, err = edit(rules)
	if err != nil {
		return err
	}
	set(rules)
	data, err := json.MarshalIndent(tree, "", "  ")
	if err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	data = append(data, '\n')
	if _, err := parseSettingsFile(path, data); err != nil {
		return err
	}
	if err := replaceFile(path, data, 0o755, 0o644); err != nil {
		return fmt.Errorf("settings: %w", err)
	}
	return nil
}

// replaceFile replaces path with data at once (a temp file renamed over
// it, so a reader never sees half a file), keeping the mode of the file it
// replaces, else perm; its folder is made with dirPerm when missing.
func replaceFile(path string, data []byte, dirPerm, perm os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), dirPerm); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if st, err := os.Stat(path); err == nil {
		perm = st.Mode().Perm()
	}
	if err := os.Chmod(tmp.Name(), perm); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

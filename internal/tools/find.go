package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// FindDefaultLimit is how many paths find shows when no limit is given.
const FindDefaultLimit = 1000

var findDescription = fmt.Sprintf("Find files and folders by glob pattern (`*`, `?`, `[abc]`, `{a,b}`, and `**` for "+
	"any number of folders). A pattern without \"/\" matches names at any depth (\"*.go\", \"README*\"); a pattern "+
	"with \"/\" matches the path below path (\"cmd/*.go\" only directly in cmd, \"internal/**/*_test.go\"); a "+
	"trailing \"/\" matches folders only. Skips .git and whatever .gitignore (.ignore, .rgignore) files exclude, "+
	"and hidden entries unless the pattern names one (\".github/**\", \"**/.env*\"); symlinks are listed, not followed. "+
	"Output: one path per line, sorted, starting with path as given (so it can be passed to read); folders end "+
	"with \"/\". At most limit paths (default %d) are shown, with a notice when there are more. "+
	"Nothing found gives \"No files found matching pattern\".", FindDefaultLimit)

var findSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"Glob pattern, e.g. \"*.go\", \"**/*_test.go\", \"src/**/*.{ts,tsx}\"."},` +
	`"path":{"type":"string","description":"Folder to search: absolute, relative to the working directory, or ~/... (default: the working directory)."},` +
	`"limit":{"type":"integer","minimum":1,"description":"Maximum number of paths to show (default 1000)."}` +
	`},"required":["pattern"],"additionalProperties":false}`)

// FindDetails is the Details JSON of a find result.
type FindDetails struct {
	Count     int  `json:"count"`     // paths shown
	Truncated bool `json:"truncated"` // more paths match than were shown
}

type findTool struct{ env Env }

// NewFind returns the find tool.
func NewFind(env Env) Tool { return &findTool{env: env} }

func (t *findTool) Name() string            { return FindName }
func (t *findTool) Description() string     { return findDescription }
func (t *findTool) Schema() json.RawMessage { return findSchema }

func (t *findTool) Execute(ctx context.Context, raw json.RawMessage, _ func(string)) Result {
	a, msg := parseArgs(FindName, raw, "pattern", "path", "limit")
	if msg != "" {
		return errorResult("%s", msg)
	}
	pattern, msg := a.str("pattern", true)
	if msg != "" {
		return errorResult("%s", msg)
	}
	p, msg := a.str("path", false)
	if msg != "" {
		return errorResult("%s", msg)
	}
	limit, msg := a.integer("limit", FindDefaultLimit, 1)
	if msg != "" {
		return errorResult("%s", msg)
	}
	var root target
	if strings.TrimSpace(p) == "" {
		root = target{abs: t.env.cwd(), display: "."}
	} else if root, msg = t.env.resolve(p, false, FindName); msg != "" {
		return errorResult("%s", msg)
	}
	fsys := t.env.fs(ctx)
	fi, err := fsys.Stat(root.abs)
	if err != nil {
		return errorResult("%s", fsMessage(err, root.display))
	}
	if !fi.IsDir() {
		return errorResult("Not a directory: %s (find searches folders; use read for a file)", root.display)
	}

	pat := strings.TrimSpace(pattern)
	if filepath.IsAbs(pat) {
		// An absolute pattern inside the searched folder is made relative.
		rest, ok := strings.CutPrefix(filepath.Clean(pat), root.abs+string(filepath.Separator))
		if !ok {
			return errorResult("Pattern %s is outside %s; give a pattern relative to path", pattern, root.display)
		}
		pat = filepath.ToSlash(rest)
	}
	g, err := newGlobFilter(pat)
	if err != nil {
		return errorResult("Invalid pattern %q: %v", pattern, err)
	}
	opts := walkOptions{hidden: namesHidden(g.rule.pattern)}
	if base := g.base(); base != "" {
		opts.prune = func(rel string) bool { return mayHold(base, rel) }
	}
	prefix := displayPrefix(p)
	var found []string
	truncated := false
	err = walkTree(ctx, fsys, root.abs, opts, func(e walkEntry) error {
		isDir := e.dir
		if !isDir && e.mode&os.ModeSymlink != 0 {
			if st, err := fsys.Stat(e.abs); err == nil && st.IsDir() {
				isDir = true // a symlink to a folder: listed as one, not entered
			}
		}
		if !g.match(e.rel, isDir) {
			return nil
		}
		if len(found) == limit {
			truncated = true
			return errStopWalk
		}
		s := prefix + e.rel
		if isDir {
			s += "/"
		}
		found = append(found, s)
		return nil
	})
	if ctx.Err() != nil {
		return abortedResult(FindName)
	}
	if err != nil {
		return errorResult("%s", fsMessage(err, root.display))
	}
	d := FindDetails{Count: len(found), Truncated: truncated}
	if len(found) == 0 {
		return Result{Content: "No files found matching pattern", Details: marshalDetails(d)}
	}
	content := strings.Join(found, "\n")
	if truncated {
		content += fmt.Sprintf("\n\n[Showing first %d results. Narrow the pattern or raise limit.]", limit)
	}
	return Result{Content: content, Details: marshalDetails(d)}
}

// namesHidden reports whether a pattern has a part starting with "." (other
// than "./" or "../"), which asks for hidden entries.
func namesHidden(pattern string) bool {
	for _, part := range strings.Split(pattern, "/") {
		if strings.HasPrefix(part, ".") && part != "." && part != ".." {
			return true
		}
	}
	return false
}

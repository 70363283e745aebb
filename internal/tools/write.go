package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

const writeDescription = "Write a file with the given content, replacing it if it exists (use edit to change part " +
	"of a file). Missing parent folders are created. The write is atomic: the file is either fully replaced or " +
	"left as it was. An existing file keeps its mode, a new one gets 0644. Content is written byte for byte " +
	"(no line-ending conversion). Reports \"Wrote N bytes (L lines) to <path>\"."

var writeSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File to write: absolute, relative to the working directory, or starting with ~/."},` +
	`"content":{"type":"string","description":"The complete new content of the file."}` +
	`},"required":["path","content"],"additionalProperties":false}`)

// WriteDetails is the Details JSON of a write result.
type WriteDetails struct {
	Path    string `json:"path"`    // absolute path of the file written
	Bytes   int    `json:"bytes"`   // bytes written
	Lines   int    `json:"lines"`   // lines written (as read counts them)
	Created bool   `json:"created"` // the file did not exist before
}

type writeTool struct{ env Env }

// NewWrite returns the write tool.
func NewWrite(env Env) Tool { return &writeTool{env: env} }

func (t *writeTool) Name() string            { return WriteName }
func (t *writeTool) Description() string     { return writeDescription }
func (t *writeTool) Schema() json.RawMessage { return writeSchema }

func (t *writeTool) Execute(ctx context.Context, raw json.RawMessage, _ func(string)) Result {
	a, msg := parseArgs(WriteName, raw, "path", "content")
	if msg != "" {
		return errorResult("%s", msg)
	}
	p, msg := a.str("path", true)
	if msg != "" {
		return errorResult("%s", msg)
	}
	content, msg := a.str("content", true)
	if msg != "" {
		return errorResult("%s", msg)
	}
	tg, msg := t.env.resolve(p, false, WriteName)
	if msg != "" {
		return errorResult("%s", msg)
	}
	if strings.HasSuffix(strings.TrimSpace(p), "/") {
		return errorResult("Not a file: %s (the path ends in /)", tg.display)
	}
	if ctx.Err() != nil {
		return abortedResult(WriteName)
	}

	fsys := t.env.fs(ctx)
	real := tg.abs
	var old fs.FileInfo
	lst, err := fsys.Lstat(tg.abs)
	switch {
	case err == nil:
		if lst.Mode()&os.ModeSymlink != 0 {
			// Write what the link points to, so the link stays a link.
			if _, err := fsys.Stat(tg.abs); errors.Is(err, fs.ErrNotExist) {
				return errorResult("Cannot write %s: it is a symlink to a missing file", tg.display)
			} else if err != nil {
				return errorResult("%s", fsMessage(err, tg.display))
			}
			if real, err = fsys.EvalSymlinks(tg.abs); err != nil {
				return errorResult("%s", fsMessage(err, tg.display))
			}
		}
	case errors.Is(err, fs.ErrNotExist):
	default:
		return errorResult("%s", fsMessage(err, tg.display))
	}
	unlock := lockPath(real)
	defer unlock()

	if fi, err := fsys.Stat(real); err == nil {
		if !fi.Mode().IsRegular() {
			return errorResult("%s", notFileMessage(fi, tg.display))
		}
		if err := checkWritable(fsys, real); err != nil {
			return errorResult("%s", fsMessage(err, tg.display))
		}
		old = fi
	} else if !errors.Is(err, fs.ErrNotExist) {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	if old == nil {
		if err := fsys.MkdirAll(filepath.Dir(real), 0o755); err != nil {
			if errors.Is(err, fs.ErrPermission) {
				return errorResult("Permission denied: %s (cannot create its folder)", tg.display)
			}
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = fmt.Errorf("%s: %w", pe.Path, pe.Err)
			}
			return errorResult("Cannot create the folder for %s: %v", tg.display, err)
		}
	}
	perm := fs.FileMode(0o644)
	if old != nil {
		perm = old.Mode().Perm()
	}
	if err := atomicWrite(fsys, real, []byte(content), perm, old); err != nil {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	d := WriteDetails{Path: real, Bytes: len(content), Lines: countLines([]byte(content)), Created: old == nil}
	return Result{
		Content: fmt.Sprintf("Wrote %s (%s) to %s", plural(d.Bytes, "byte", "bytes"), plural(d.Lines, "line", "lines"), tg.display),
		Details: marshalDetails(d),
	}
}

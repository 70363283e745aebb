package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"agentsh/internal/bash"
)

// EditMaxFileSize is the largest file edit will load.
const EditMaxFileSize = 64 << 20

// editMaxDiffInContent bounds the diff the model reads; Details keeps all.
const editMaxDiffInContent = 50 * 1024

const editDescription = "Replace exact text in a file. oldText must match the file exactly, including whitespace " +
	"and indentation (read the file first), and must occur exactly once unless replaceAll is true; add surrounding " +
	"lines to make it unique. Line endings and a UTF-8 BOM are kept: in a CRLF file, oldText and newText may use " +
	"plain \\n. The file is replaced atomically, keeping its mode. Returns a one-line summary followed by a unified " +
	"diff of the change. To create a file or replace all of it, use write."

var editSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File to edit: absolute, relative to the working directory, or starting with ~/."},` +
	`"oldText":{"type":"string","description":"Exact text to replace; must be unique in the file unless replaceAll is true."},` +
	`"newText":{"type":"string","description":"Text to put in its place (may be empty to delete)."},` +
	`"replaceAll":{"type":"boolean","description":"Replace every occurrence of oldText (default false)."}` +
	`},"required":["path","oldText","newText"],"additionalProperties":false}`)

// errChangedOnDisk aborts an edit whose file another process wrote after
// the edit read it.
var errChangedOnDisk = errors.New("file changed on disk")

// EditDetails is the Details JSON of an edit result.
type EditDetails struct {
	Diff         string `json:"diff"`         // full unified diff (LF line endings)
	Path         string `json:"path"`         // absolute path of the file written
	Replacements int    `json:"replacements"` // occurrences replaced
}

type editTool struct{ env Env }

// NewEdit returns the edit tool.
func NewEdit(env Env) Tool { return &editTool{env: env} }

func (t *editTool) Name() string            { return EditName }
func (t *editTool) Description() string     { return editDescription }
func (t *editTool) Schema() json.RawMessage { return editSchema }

func (t *editTool) Execute(ctx context.Context, raw json.RawMessage, _ func(string)) Result {
	a, msg := parseArgs(EditName, raw, "path", "oldText", "newText", "replaceAll")
	if msg != "" {
		return errorResult("%s", msg)
	}
	p, msg := a.str("path", true)
	if msg != "" {
		return errorResult("%s", msg)
	}
	oldText, msg := a.str("oldText", true)
	if msg != "" {
		return errorResult("%s", msg)
	}
	newText, msg := a.str("newText", true)
	if msg != "" {
		return errorResult("%s", msg)
	}
	replaceAll, msg := a.boolean("replaceAll")
	if msg != "" {
		return errorResult("%s", msg)
	}
	if oldText == "" {
		return errorResult("oldText must not be empty (use write to create or replace a whole file)")
	}
	if oldText == newText {
		return errorResult("oldText and newText are identical; nothing to change")
	}
	tg, msg := t.env.resolve(p, false, EditName)
	if msg != "" {
		return errorResult("%s", msg)
	}
	if ctx.Err() != nil {
		return abortedResult(EditName)
	}

	fsys := t.env.fs(ctx)
	// Edit what a symlink points to, so the link stays a link.
	if _, err := fsys.Stat(tg.abs); err != nil {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	real, err := fsys.EvalSymlinks(tg.abs)
	if err != nil {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	unlock := lockPath(real)
	defer unlock()
	fi, err := fsys.Stat(real)
	if err != nil {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	if !fi.Mode().IsRegular() {
		return errorResult("%s", notFileMessage(fi, tg.display))
	}
	if fi.Size() > EditMaxFileSize {
		return errorResult("File too large to edit: %s (%s; the limit is %s)", tg.display,
			bash.FormatSize(int(fi.Size())), bash.FormatSize(EditMaxFileSize))
	}
	data, err := readFileFS(fsys, real)
	if err != nil {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	if why := binaryReason(data); why != "" {
		return errorResult("Cannot edit binary file: %s (%s)", tg.display, why)
	}

	const bom = "\uFEFF"
	content := string(data)
	hasBOM := strings.HasPrefix(content, bom)
	content = strings.TrimPrefix(content, bom)
	oldText = strings.TrimPrefix(oldText, bom)
	newText = strings.TrimPrefix(newText, bom)

	// Speak the file's line ending: a CRLF file gets CRLF needles.
	crlf := usesCRLF(content)
	needle, repl := toEOL(oldText, crlf), toEOL(newText, crlf)
	count := strings.Count(content, needle)
	if count == 0 && needle != oldText && strings.Contains(content, oldText) {
		// A file with mixed endings: the text as given is there.
		needle, repl = oldText, newText
		count = strings.Count(content, needle)
	}
	switch {
	case count == 0:
		return errorResult("Could not find the text to replace in %s. oldText must match exactly, including "+
			"whitespace and indentation; read the file again to check.", tg.display)
	case count > 1 && !replaceAll:
		return errorResult("Found %d occurrences of the text in %s; add more context to make it unique or set replaceAll.",
			count, tg.display)
	}
	updated := strings.ReplaceAll(content, needle, repl)
	if updated == content {
		return errorResult("The replacement leaves %s unchanged", tg.display)
	}
	out := updated
	if hasBOM {
		out = bom + updated
	}
	if err := checkWritable(fsys, real); err != nil {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	if ctx.Err() != nil {
		return abortedResult(EditName)
	}
	// Another process (an editor, a formatter, the user's own `!` command)
	// may have written the file since it was read: replacing it now would
	// silently undo that change. What is compared is the content itself;
	// only the rename's own instant is left uncovered.
	unchanged := func() error {
		if st, err := fsys.Stat(real); err != nil || st.Size() != int64(len(data)) {
			return errChangedOnDisk
		}
		if now, err := readFileFS(fsys, real); err != nil || !bytes.Equal(now, data) {
			return errChangedOnDisk
		}
		return nil
	}
	if err := atomicWriteChecked(fsys, real, []byte(out), fi.Mode().Perm(), fi, unchanged); err != nil {
		if errors.Is(err, errChangedOnDisk) {
			return errorResult("File changed on disk while editing: %s. Read it again and retry.", tg.display)
		}
		return errorResult("%s", fsMessage(err, tg.display))
	}

	name := diffName(t.env.cwd(), tg.abs)
	diff := unifiedDiff(name[0], name[1], strings.ReplaceAll(content, "\r\n", "\n"), strings.ReplaceAll(updated, "\r\n", "\n"))
	summary := fmt.Sprintf("Replaced %s in %s.", plural(count, "occurrence", "occurrences"), tg.display)
	shown := diff
	if len(shown) > editMaxDiffInContent {
		cut := strings.LastIndexByte(shown[:editMaxDiffInContent], '\n') + 1
		shown = shown[:cut] + fmt.Sprintf("[Diff cut at %s of %s; the edit was applied in full.]\n",
			bash.FormatSize(cut), bash.FormatSize(len(diff)))
	}
	return Result{
		Content: summary + "\n" + strings.TrimSuffix(shown, "\n"),
		Details: marshalDetails(EditDetails{Diff: diff, Path: real, Replacements: count}),
	}
}

// usesCRLF reports whether the file's first line ends in "\r\n".
func usesCRLF(s string) bool {
	i := strings.IndexByte(s, '\n')
	return i > 0 && s[i-1] == '\r'
}

// toEOL rewrites the line endings of s to "\r\n" (crlf) or "\n".
func toEOL(s string, crlf bool) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	if crlf {
		s = strings.ReplaceAll(s, "\n", "\r\n")
	}
	return s
}

// diffName returns the diff headers for abs: "a/rel" and "b/rel" when it
// lies under cwd, else the absolute path twice.
func diffName(cwd, abs string) [2]string {
	if rel, err := filepath.Rel(cwd, abs); err == nil && rel != "." && rel != ".." &&
		!strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel) {
		rel = filepath.ToSlash(rel)
		return [2]string{"a/" + rel, "b/" + rel}
	}
	s := filepath.ToSlash(abs)
	return [2]string{s, s}
}

package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"agentsh/internal/confinedfs"
)

// Limits of the grep tool.
const (
	GrepDefaultLimit = 100 // matches shown when no limit is given
	GrepMaxLineChars = 500 // characters kept of a shown line
)

var grepDescription = fmt.Sprintf("Search file contents with a regular expression (Go RE2 syntax: no lookaround or "+
	"backreferences; escape literal metacharacters like \\( or \\.). path is a file or a folder (default: the working "+
	"directory), searched recursively. Like ripgrep it skips .git, hidden files and folders, binary files, and "+
	"whatever .gitignore (.ignore, .rgignore) files exclude; it does not follow symlinks inside folders. "+
	"glob limits the files searched: \"*.go\" matches names at any depth, a glob with a \"/\" (\"internal/**/*.go\") "+
	"matches the path below path, \"!*_test.go\" excludes; a glob overrides the ignore rules. "+
	"Output lines are path:line:text, context lines path-line-text, groups separated by --; paths start with path "+
	"as given, so they can be passed to read. Results are sorted by path, then line. At most limit matches "+
	"(default %d) are shown, with a notice when there are more; lines longer than %d characters are cut. "+
	"No match gives \"No matches found\".", GrepDefaultLimit, GrepMaxLineChars)

var grepSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"pattern":{"type":"string","description":"Regular expression (Go RE2 syntax) searched for in each line."},` +
	`"path":{"type":"string","description":"File or folder to search: absolute, relative to the working directory, ~/..., or artifact://N (default: the working directory)."},` +
	`"glob":{"type":"string","description":"Only search files matching this glob, e.g. \"*.go\", \"**/*.{ts,tsx}\", \"cmd/**\"; a leading ! excludes instead."},` +
	`"ignoreCase":{"type":"boolean","description":"Match case-insensitively (default false)."},` +
	`"context":{"type":"integer","minimum":0,"description":"Lines of context to show before and after each match (default 0)."},` +
	`"limit":{"type":"integer","minimum":1,"description":"Maximum number of matches to show (default 100)."}` +
	`},"required":["pattern"],"additionalProperties":false}`)

// GrepDetails is the Details JSON of a grep result.
type GrepDetails struct {
	Matches   int    `json:"matches"`   // matches shown
	Files     int    `json:"files"`     // files with a shown match
	Truncated bool   `json:"truncated"` // more matches exist than were shown
	Engine    string `json:"engine"`    // "ripgrep" or "go"
}

type grepTool struct {
	env Env
	// lookRg finds ripgrep; nil uses exec.LookPath("rg"). Tests swap it.
	lookRg func() (string, error)
}

// NewGrep returns the grep tool. It runs ripgrep when rg is on PATH and
// otherwise a built-in walker with the same results.
func NewGrep(env Env) Tool { return &grepTool{env: env} }

func (t *grepTool) Name() string            { return GrepName }
func (t *grepTool) Description() string     { return grepDescription }
func (t *grepTool) Schema() json.RawMessage { return grepSchema }

// grepLine is one shown line of a file.
type grepLine struct {
	n     int
	text  string // valid UTF-8, cut to GrepMaxLineChars
	match bool
}

// grepFile is one file's matches and context lines, in line order.
type grepFile struct {
	rel     string // slash path below the searched folder ("" for a file)
	display string
	lines   []grepLine
}

type grepQuery struct {
	re      *regexp.Regexp
	expr    string // the regexp as compiled, for ripgrep
	glob    string
	filter  *globFilter
	negated bool // glob starts with "!"
	context int
	limit   int
	root    target
	rootDir bool
	prefix  string // display prefix of paths below a folder
	fsys    FS
}

func (t *grepTool) Execute(ctx context.Context, raw json.RawMessage, _ func(string)) Result {
	a, msg := parseArgs(GrepName, raw, "pattern", "path", "glob", "ignoreCase", "context", "limit")
	if msg != "" {
		return errorResult("%s", msg)
	}
	var q grepQuery
	pattern, msg := a.str("pattern", true)
	if msg != "" {
		return errorResult("%s", msg)
	}
	if pattern == "" {
		return errorResult("pattern must not be empty")
	}
	p, msg := a.str("path", false)
	if msg != "" {
		return errorResult("%s", msg)
	}
	if q.glob, msg = a.str("glob", false); msg != "" {
		return errorResult("%s", msg)
	}
	ignoreCase, msg := a.boolean("ignoreCase")
	if msg != "" {
		return errorResult("%s", msg)
	}
	if q.context, msg = a.integer("context", 0, 0); msg != "" {
		return errorResult("%s", msg)
	}
	if q.limit, msg = a.integer("limit", GrepDefaultLimit, 1); msg != "" {
		return errorResult("%s", msg)
	}
	q.expr = pattern
	if ignoreCase {
		q.expr = "(?i)" + pattern
	}
	var err error
	if q.re, err = regexp.Compile(q.expr); err != nil {
		return errorResult("Invalid regular expression: %v", err)
	}
	if g := strings.TrimSpace(q.glob); g != "" {
		q.negated = strings.HasPrefix(g, "!")
		q.glob = strings.TrimPrefix(strings.TrimPrefix(g, "!"), "./")
		if q.filter, err = newGlobFilter(q.glob); err != nil {
			return errorResult("Invalid glob %q: %v", g, err)
		}
		if q.negated {
			q.glob = "!" + q.glob
		}
	}
	if strings.TrimSpace(p) == "" {
		q.root = target{abs: t.env.cwd(), display: "."}
	} else if q.root, msg = t.env.resolve(p, true, GrepName); msg != "" {
		return errorResult("%s", msg)
	}
	q.fsys = t.env.fs(ctx)
	fi, err := q.fsys.Stat(q.root.abs)
	if err != nil {
		return errorResult("%s", fsMessage(err, q.root.display))
	}
	switch {
	case fi.IsDir():
		q.rootDir = true
		q.prefix = displayPrefix(p)
	case fi.Mode().IsRegular():
		if why, err := sniffBinary(q.fsys, q.root.abs); err != nil {
			return errorResult("%s", fsMessage(err, q.root.display))
		} else if why != "" {
			return errorResult("Cannot search binary file: %s (%s)", q.root.display, why)
		}
	default:
		return errorResult("%s", notFileMessage(fi, q.root.display))
	}

	var (
		files  []grepFile
		engine = "go"
		done   bool
	)
	look := t.lookRg
	if look == nil {
		look = func() (string, error) { return exec.LookPath("rg") }
	}
	// Another file system than the host's or a sandbox's cannot run
	// ripgrep in its view: the walker searches through it.
	if _, confined := q.fsys.(*confinedfs.FS); !confined && !isHost(q.fsys) {
		look = func() (string, error) { return "", errors.New("not a view ripgrep runs in") }
	}
	if rg, err := look(); err == nil {
		files, done, err = q.ripgrep(ctx, rg)
		if ctx.Err() != nil {
			return abortedResult(GrepName)
		}
		if err == nil && done {
			engine = "ripgrep"
		}
	}
	if engine == "go" {
		files, err = q.walk(ctx)
		if ctx.Err() != nil {
			return abortedResult(GrepName)
		}
		if err != nil {
			return errorResult("%s", fsMessage(err, q.root.display))
		}
	}
	content, d := formatGrep(files, q.limit, q.context)
	d.Engine = engine
	return Result{Content: content, Details: marshalDetails(d)}
}

// sniffBinary reads the start of a file and says why it is binary, or "".
func sniffBinary(fsys FS, p string) (string, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return "", err
	}
	defer f.Close()
	head := make([]byte, binarySniffLen)
	n, err := io.ReadFull(f, head)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) {
		return "", err
	}
	if bytes.IndexByte(head[:n], 0) >= 0 {
		return "contains NUL bytes", nil
	}
	return "", nil
}

// walk searches with the built-in walker.
func (q *grepQuery) walk(ctx context.Context) ([]grepFile, error) {
	if !q.rootDir {
		gf, _, binary, err := q.scanFile(ctx, q.root.abs, nil, q.limit+1)
		if err != nil || binary || len(gf.lines) == 0 {
			return nil, err
		}
		gf.display = q.root.display
		return []grepFile{gf}, nil
	}
	var files []grepFile
	total := 0
	opts := walkOptions{open: true}
	if q.filter != nil {
		opts.override = func(rel string, isDir bool) verdict {
			m := q.filter.match(rel, isDir)
			switch {
			case q.negated && m:
				return verdictIgnore
			case q.negated:
				return verdictNone
			case m:
				return verdictInclude
			case isDir:
				return verdictNone
			}
			return verdictIgnore
		}
		if base := q.filter.base(); base != "" && !q.negated {
			// Files outside the glob's fixed folder cannot match it.
			opts.prune = func(rel string) bool { return mayHold(base, rel) }
		}
	}
	err := walkTree(ctx, q.fsys, q.root.abs, opts, func(e walkEntry) error {
		if e.dir || !e.mode.IsRegular() {
			return nil // folders are walked; symlinks and devices are not searched
		}
		gf, n, binary, err := q.scanFile(ctx, e.abs, e.file, q.limit+1-total)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return nil // unreadable files are skipped, as ripgrep does
		}
		if binary || n == 0 {
			return nil
		}
		gf.rel = e.rel
		gf.display = q.prefix + e.rel
		files = append(files, gf)
		total += n
		if total > q.limit {
			return errStopWalk
		}
		return nil
	})
	if err != nil && !errors.Is(err, fs.SkipDir) {
		return files, err
	}
	return files, nil
}

// scanFile searches one file (f when it was opened ahead, else p),
// stopping after max matches. A file with a NUL byte anywhere (in the part
// read) is binary and has no results.
func (q *grepQuery) scanFile(ctx context.Context, p string, f *os.File, max int) (gf grepFile, matches int, binary bool, err error) {
	if f == nil {
		if f, err = q.fsys.Open(p); err != nil {
			return gf, 0, false, err
		}
		defer f.Close()
	}
	br := bufio.NewReaderSize(f, 64<<10)
	var (
		before [][]byte // context candidates before the next match
		after  int      // context lines still owed after a match
		n      int
		long   []byte
	)
	for {
		if n&1023 == 0 && ctx.Err() != nil {
			return gf, 0, false, ctx.Err()
		}
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return gf, 0, false, err
		}
		if len(line) == 0 {
			break
		}
		if bytes.IndexByte(line, 0) >= 0 {
			return grepFile{}, 0, true, nil
		}
		n++
		text := trimEOL(line)
		if n == 1 {
			text = bytes.TrimPrefix(text, []byte("\uFEFF"))
		}
		switch {
		case q.re.Match(text):
			for i, b := range before {
				gf.lines = append(gf.lines, grepLine{n: n - len(before) + i, text: shownLine(b)})
			}
			before = before[:0]
			gf.lines = append(gf.lines, grepLine{n: n, text: shownLine(text), match: true})
			matches++
			after = q.context
			if matches >= max {
				return gf, matches, false, nil
			}
		case after > 0:
			gf.lines = append(gf.lines, grepLine{n: n, text: shownLine(text)})
			after--
		case q.context > 0:
			if len(before) == q.context {
				copy(before, before[1:])
				before = before[:len(before)-1]
			}
			before = append(before, bytes.Clone(text))
		}
		if err != nil {
			break
		}
	}
	return gf, matches, false, nil
}

// trimEOL drops a line's "\n" and a "\r" before it (or a final lone "\r").
func trimEOL(b []byte) []byte {
	b = bytes.TrimSuffix(b, []byte("\n"))
	return bytes.TrimSuffix(b, []byte("\r"))
}

// shownLine turns a line into the text grep shows.
func shownLine(b []byte) string {
	return cutLine(strings.ToValidUTF8(string(b), "\uFFFD"), GrepMaxLineChars)
}

// rgMessage is one line of `rg --json`.
type rgMessage struct {
	Type string `json:"type"`
	Data struct {
		Path         rgData `json:"path"`
		Lines        rgData `json:"lines"`
		LineNumber   int    `json:"line_number"`
		BinaryOffset *int64 `json:"binary_offset"`
	} `json:"data"`
}

// rgData is ripgrep's text-or-base64-bytes value.
type rgData struct {
	Text  *string `json:"text"`
	Bytes string  `json:"bytes"`
}

func (d rgData) bytes() []byte {
	if d.Text != nil {
		return []byte(*d.Text)
	}
	b, _ := base64.StdEncoding.DecodeString(d.Bytes)
	return b
}

// ripgrep runs rg and parses its JSON into the same files the walker finds.
// ok is false when rg failed before finding anything (for example a regexp
// it does not accept), so the caller falls back to the walker.
func (q *grepQuery) ripgrep(ctx context.Context, rg string) (files []grepFile, ok bool, err error) {
	args := []string{"--json", "--sort", "path", "--no-config", "--no-messages",
		"--no-require-git", "--no-ignore-global", "--crlf", "--encoding", "none"}
	if q.context > 0 {
		args = append(args, "--context", strconv.Itoa(q.context))
	}
	if q.glob != "" && q.rootDir {
		args = append(args, "--glob", q.glob)
	}
	args = append(args, "--regexp", q.expr, "--")
	dir := ""
	if q.rootDir {
		dir = q.root.abs
		args = append(args, ".")
	} else {
		args = append(args, q.root.abs)
	}
	run, err := startRg(ctx, q.fsys, rg, args, dir)
	if err != nil {
		return nil, false, err
	}
	stdout := run.stdout
	var (
		br      = bufio.NewReaderSize(stdout, 64<<10)
		cur     *grepFile
		total   int
		began   bool
		stopped bool
	)
	for !stopped {
		line, rerr := br.ReadBytes('\n')
		if len(bytes.TrimSpace(line)) > 0 {
			var m rgMessage
			if json.Unmarshal(line, &m) == nil {
				switch m.Type {
				case "begin":
					began = true
					rel := strings.TrimPrefix(string(bytesToValid(m.Data.Path.bytes())), "./")
					cur = &grepFile{rel: rel, display: q.prefix + rel}
					if !q.rootDir {
						cur.rel, cur.display = "", q.root.display
					}
				case "match", "context":
					if cur == nil {
						break
					}
					text := trimEOL(m.Data.Lines.bytes())
					if m.Data.LineNumber == 1 {
						text = bytes.TrimPrefix(text, []byte("\uFEFF"))
					}
					cur.lines = append(cur.lines, grepLine{n: m.Data.LineNumber, text: shownLine(text), match: m.Type == "match"})
					if m.Type == "match" {
						total++
						if total > q.limit {
							files = append(files, *cur)
							cur = nil
							stopped = true
						}
					}
				case "end":
					if cur != nil && m.Data.BinaryOffset == nil && len(cur.lines) > 0 {
						files = append(files, *cur)
					}
					cur = nil
				}
			}
		}
		if rerr != nil {
			break
		}
	}
	if stopped {
		run.kill()
	}
	code, werr := run.wait() // closes stdout; after a kill nothing more is read
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	// 1 is "no match"; 2 with nothing found means rg could not search at
	// all.
	if !stopped && (werr != nil || code != 0) && code != 1 && !began {
		if werr == nil {
			werr = fmt.Errorf("exit status %d", code)
		}
		return nil, false, fmt.Errorf("rg: %v: %s", werr, strings.TrimSpace(run.stderr()))
	}
	slices.SortStableFunc(files, func(a, b grepFile) int { return compareRel(a.rel, b.rel) })
	return files, true, nil
}

// rgRun is a running ripgrep: its output, and how to end and wait for it.
type rgRun struct {
	stdout io.Reader
	kill   func()
	// wait returns rg's exit status, or an error when it has none.
	wait   func() (int, error)
	stderr func() string
}

// startRg starts ripgrep: on the host as a child of agentsh, in a
// sandbox's view below a guardian with the same sandbox as the view's
// helper, so it reads only what the policy lets the model read.
func startRg(ctx context.Context, fsys FS, rg string, args []string, dir string) (*rgRun, error) {
	if cfs, ok := fsys.(*confinedfs.FS); ok {
		return startRgConfined(ctx, cfs, rg, args, dir)
	}
	cmd := exec.CommandContext(ctx, rg, args...)
	cmd.Dir = dir
	cmd.WaitDelay = 2 * time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	return &rgRun{
		stdout: stdout,
		kill:   func() { _ = cmd.Process.Kill() },
		wait: func() (int, error) {
			err := cmd.Wait()
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return ee.ExitCode(), nil
			}
			return 0, err
		},
		stderr: stderr.String,
	}, nil
}

func startRgConfined(ctx context.Context, cfs *confinedfs.FS, rg string, args []string, dir string) (*rgRun, error) {
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	p, err := cfs.StartProgram(rg, append([]string{rg}, args...), dir, nil, outW, errW)
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return nil, err
	}
	var stderr bytes.Buffer
	stderrDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(&stderr, io.LimitReader(errR, 64<<10))
		errR.Close()
		close(stderrDone)
	}()
	stop := context.AfterFunc(ctx, p.Stop)
	return &rgRun{
		stdout: outR,
		kill:   p.Stop,
		wait: func() (int, error) {
			stop()
			code := p.Wait()
			outR.Close()
			<-stderrDone
			return code, nil
		},
		stderr: stderr.String,
	}, nil
}

func bytesToValid(b []byte) []byte { return bytes.ToValidUTF8(b, []byte("\uFFFD")) }

// formatGrep renders the first limit matches (files in order, lines in
// order) with the context lines that belong to them.
func formatGrep(files []grepFile, limit, context int) (string, GrepDetails) {
	var (
		out   []string
		d     GrepDetails
		count int
	)
	for _, f := range files {
		if count >= limit {
			d.Truncated = true
			break
		}
		var kept []int // line numbers of the shown matches
		for _, l := range f.lines {
			if !l.match {
				continue
			}
			if count >= limit {
				d.Truncated = true
				break
			}
			kept = append(kept, l.n)
			count++
		}
		if len(kept) == 0 {
			continue
		}
		d.Files++
		near := func(n int) bool {
			i, _ := slices.BinarySearch(kept, n)
			return (i < len(kept) && kept[i]-n <= context) || (i > 0 && n-kept[i-1] <= context)
		}
		prev := -1
		if len(out) > 0 && context > 0 {
			out = append(out, "--")
		}
		for _, l := range f.lines {
			if l.match {
				if _, found := slices.BinarySearch(kept, l.n); !found {
					continue
				}
			} else if !near(l.n) {
				continue
			}
			if prev >= 0 && l.n > prev+1 && context > 0 {
				out = append(out, "--")
			}
			sep := "-"
			if l.match {
				sep = ":"
			}
			out = append(out, f.display+sep+strconv.Itoa(l.n)+sep+l.text)
			prev = l.n
		}
	}
	d.Matches = count
	if count == 0 {
		return "No matches found", d
	}
	content := strings.Join(out, "\n")
	if d.Truncated {
		content += fmt.Sprintf("\n\n[Showing first %d matches. Narrow the search or raise limit.]", limit)
	}
	return content, d
}

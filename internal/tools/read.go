package tools

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"agentsh/internal/bash"
)

// Limits of the read tool.
const (
	ReadDefaultLimit = 2000      // lines shown when no limit is given
	ReadMaxBytes     = 50 * 1024 // output bytes per call, whatever the limit
	ReadMaxLineChars = 2000      // characters kept of one line
)

var readDescription = fmt.Sprintf("Read a text file. Lines are numbered like `cat -n`: the line number right-aligned "+
	"in 6 columns, a tab, then the line (line endings stripped; CRLF shows as plain lines). "+
	"offset is the 1-based first line to show, limit the number of lines (default %d). "+
	"At most %d lines and %s are returned per call; when more remain a notice at the end gives the next offset, "+
	"e.g. [Showing lines 1-%d of 10000. Use offset=%d to continue.]. Lines longer than %d characters are cut "+
	"with \"… [N chars omitted]\". Binary files are refused. Paths are absolute, relative to the working "+
	"directory, or ~/...; artifact://N reads the full output of an earlier truncated command.",
	ReadDefaultLimit, ReadDefaultLimit, bash.FormatSize(ReadMaxBytes), ReadDefaultLimit, ReadDefaultLimit+1, ReadMaxLineChars)

var readSchema = json.RawMessage(`{"type":"object","properties":{` +
	`"path":{"type":"string","description":"File to read: absolute, relative to the working directory, ~/..., or artifact://N."},` +
	`"offset":{"type":"integer","minimum":1,"description":"1-based number of the first line to show (default 1)."},` +
	`"limit":{"type":"integer","minimum":1,"description":"Maximum number of lines to show (default 2000)."}` +
	`},"required":["path"],"additionalProperties":false}`)

// ReadDetails is the Details JSON of a read result.
type ReadDetails struct {
	Path        string `json:"path"`                  // file read (the artifact's file for artifact://)
	Artifact    string `json:"artifact,omitempty"`    // the artifact:// URL when one was read
	StartLine   int    `json:"startLine"`             // first line shown (1-based); 0 for an empty file
	EndLine     int    `json:"endLine"`               // last line shown
	TotalLines  int    `json:"totalLines"`            // lines in the file
	TruncatedBy string `json:"truncatedBy,omitempty"` // "lines" or "bytes" when more remain
	NextOffset  int    `json:"nextOffset,omitempty"`  // offset that continues, when more remain
}

type readTool struct{ env Env }

// NewRead returns the read tool.
func NewRead(env Env) Tool { return &readTool{env: env} }

func (t *readTool) Name() string            { return ReadName }
func (t *readTool) Description() string     { return readDescription }
func (t *readTool) Schema() json.RawMessage { return readSchema }

func (t *readTool) Execute(ctx context.Context, raw json.RawMessage, _ func(string)) Result {
	a, msg := parseArgs(ReadName, raw, "path", "offset", "limit")
	if msg != "" {
		return errorResult("%s", msg)
	}
	path, msg := a.str("path", true)
	if msg != "" {
		return errorResult("%s", msg)
	}
	offset, msg := a.integer("offset", 1, 1)
	if msg != "" {
		return errorResult("%s", msg)
	}
	limit, msg := a.integer("limit", ReadDefaultLimit, 1)
	if msg != "" {
		return errorResult("%s", msg)
	}
	tg, msg := t.env.resolve(path, true, ReadName)
	if msg != "" {
		return errorResult("%s", msg)
	}
	return readFile(ctx, t.env.fs(ctx), tg, offset, limit)
}

func readFile(ctx context.Context, fsys FS, tg target, offset, limit int) Result {
	// Stat before opening: opening a FIFO would block.
	fi, err := fsys.Stat(tg.abs)
	if err != nil {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	if !fi.Mode().IsRegular() {
		return errorResult("%s", notFileMessage(fi, tg.display))
	}
	f, err := fsys.Open(tg.abs)
	if err != nil {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	defer f.Close()

	br := bufio.NewReaderSize(f, 64<<10)
	head, err := br.Peek(binarySniffLen)
	if err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, bufio.ErrBufferFull) {
		return errorResult("%s", fsMessage(err, tg.display))
	}
	if why := binaryReason(head); why != "" {
		return errorResult("Cannot read binary file: %s (%s)", tg.display, why)
	}

	var (
		out     strings.Builder
		line    = 0 // lines read so far
		first   = 0 // first line shown
		last    = 0 // last line shown
		byBytes = false
		atEOF   = false
	)
	for !atEOF {
		if line&4095 == 0 && ctx.Err() != nil {
			return abortedResult(ReadName)
		}
		inWindow := line+1 >= offset
		text, chars, ok, err := readLine(br, inWindow)
		if err != nil {
			return errorResult("%s", fsMessage(err, tg.display))
		}
		if !ok {
			atEOF = true
			break
		}
		line++
		if !inWindow {
			continue
		}
		if line == 1 {
			text = bytes.TrimPrefix(text, []byte("\uFEFF"))
		}
		s := strings.ToValidUTF8(string(text), "\uFFFD")
		if chars > ReadMaxLineChars {
			s = cutLineCount(s, ReadMaxLineChars, chars)
		}
		entry := fmt.Sprintf("%6d\t%s", line, s)
		if first != 0 && out.Len()+1+len(entry) > ReadMaxBytes {
			byBytes = true // the line just read is not shown but counted
			break
		}
		if first == 0 {
			first = line
		} else {
			out.WriteByte('\n')
		}
		out.WriteString(entry)
		last = line
		if last-first+1 >= limit {
			break
		}
	}
	total := line
	if !atEOF {
		// Count the rest without keeping it; the line held back by the
		// byte limit is among them.
		n, err := countRest(ctx, br)
		if err != nil {
			if ctx.Err() != nil {
				return abortedResult(ReadName)
			}
			return errorResult("%s", fsMessage(err, tg.display))
		}
		total += n
	}
	if total == 0 && offset == 1 {
		return Result{Content: "[File is empty: " + tg.display + "]", Details: marshalDetails(readDetails(tg, 0, 0, 0, "", 0))}
	}
	if first == 0 {
		return errorResult("Offset %d is beyond the end of %s (%s)", offset, tg.display, plural(total, "line", "lines"))
	}
	content := out.String()
	by, next := "", 0
	if last < total {
		next = last + 1
		if byBytes {
			by = "bytes"
			content += fmt.Sprintf("\n\n[Showing lines %d-%d of %d (%s limit). Use offset=%d to continue.]",
				first, last, total, bash.FormatSize(ReadMaxBytes), next)
		} else {
			by = "lines"
			content += fmt.Sprintf("\n\n[Showing lines %d-%d of %d. Use offset=%d to continue.]", first, last, total, next)
		}
	}
	return Result{Content: content, Details: marshalDetails(readDetails(tg, first, last, total, by, next))}
}

func readDetails(tg target, first, last, total int, by string, next int) ReadDetails {
	d := ReadDetails{Path: tg.abs, StartLine: first, EndLine: last, TotalLines: total, TruncatedBy: by, NextOffset: next}
	if tg.artifact {
		d.Artifact = tg.display
	}
	return d
}

// maxKeptLineBytes is enough bytes for ReadMaxLineChars characters of any
// UTF-8 text.
const maxKeptLineBytes = ReadMaxLineChars*utf8.UTFMax + utf8.UTFMax

// readLine reads one line. With keep it returns the line without its "\n",
// "\r\n" or final "\r" (at most maxKeptLineBytes of it) and its length in
// characters; without keep it only skips it. ok is false at the end of the
// input.
func readLine(br *bufio.Reader, keep bool) (text []byte, chars int, ok bool, err error) {
	var buf []byte
	total := 0
	var p1, p2 byte // the line's last two bytes so far, p2 the last
	for {
		chunk, err := br.ReadSlice('\n')
		if n := len(chunk); n > 0 {
			total += n
			if n >= 2 {
				p1, p2 = chunk[n-2], chunk[n-1]
			} else {
				p1, p2 = p2, chunk[0]
			}
			if keep {
				if room := maxKeptLineBytes + 2 - len(buf); room > 0 {
					buf = append(buf, chunk[:min(room, n)]...)
				}
				for _, c := range chunk {
					if c&0xC0 != 0x80 {
						chars++
					}
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return nil, 0, false, err
		}
		if total == 0 {
			return nil, 0, false, nil
		}
		term := 0
		switch {
		case p2 == '\n' && total >= 2 && p1 == '\r':
			term = 2
		case p2 == '\n', p2 == '\r':
			term = 1
		}
		if keep {
			chars -= term
			if len(buf) == total {
				buf = buf[:total-term]
			}
			if len(buf) > maxKeptLineBytes {
				buf = buf[:maxKeptLineBytes]
			}
		}
		return buf, chars, true, nil
	}
}

// cutLineCount cuts s to max characters when the whole line had total.
func cutLineCount(s string, max, total int) string {
	i, c := 0, 0
	for i = range s {
		if c == max {
			break
		}
		c++
	}
	if c < max {
		i = len(s)
	}
	return s[:i] + fmt.Sprintf("… [%d chars omitted]", total-max)
}

// countRest counts the lines left in br.
func countRest(ctx context.Context, br *bufio.Reader) (int, error) {
	buf := make([]byte, 64<<10)
	n, lastByte, any := 0, byte('\n'), false
	for i := 0; ; i++ {
		if i&63 == 0 && ctx.Err() != nil {
			return 0, ctx.Err()
		}
		k, err := br.Read(buf)
		if k > 0 {
			any = true
			n += bytes.Count(buf[:k], []byte{'\n'})
			lastByte = buf[k-1]
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return 0, err
		}
	}
	if any && lastByte != '\n' {
		n++
	}
	return n, nil
}

package bash

import (
	"bufio"
	"errors"
	"io"
	"os"
	"strings"
	"unicode/utf8"

	"agentsh/internal/sink"
)

// HeadTailResult is the outcome of ApplyHeadTail.
type HeadTailResult struct {
	Text        string // the filtered text (the input itself when nothing was removed)
	Applied     bool   // HeadApplied || TailApplied
	HeadApplied bool   // the head limit removed lines
	TailApplied bool   // the tail limit removed lines
}

// ApplyHeadTail keeps the first head lines of text, then the last tail lines of
// what remains. A limit of 0 or less means no limit, and a limit counts as
// applied only when it removed lines.
//
// Lines are separated by "\n" ("\r" is kept as part of a line). A single final
// "\n" terminates the last line rather than starting an empty one, so
// "a\nb\nc\n" is three lines; when the input ends in "\n" the kept text ends in
// "\n" too ("a\nb\nc\n" with head 2 is "a\nb\n", with tail 2 "b\nc\n"), which
// is what head(1) and tail(1) print. Runs in linear time without splitting.
func ApplyHeadTail(text string, head, tail int) HeadTailResult {
	res := HeadTailResult{Text: text}
	if head <= 0 && tail <= 0 {
		return res
	}
	body, final := text, ""
	if strings.HasSuffix(body, "\n") {
		body, final = body[:len(body)-1], "\n"
	}
	if head > 0 {
		// More than head lines exist exactly when the head-th "\n" exists;
		// the first head lines end just before it.
		if i := nthNewline(body, head); i >= 0 {
			body = body[:i]
			res.HeadApplied = true
		}
	}
	if tail > 0 {
		// More than tail lines exist exactly when there are tail "\n"s; the
		// last tail lines start just after the tail-th "\n" from the end.
		if i := nthNewlineFromEnd(body, tail); i >= 0 {
			body = body[i+1:]
			res.TailApplied = true
		}
	}
	res.Applied = res.HeadApplied || res.TailApplied
	if res.Applied {
		res.Text = body + final
	}
	return res
}

// nthNewline returns the index of the n-th (1-based) "\n" in s, or -1.
func nthNewline(s string, n int) int {
	off := 0
	for ; n > 0; n-- {
		i := strings.IndexByte(s[off:], '\n')
		if i < 0 {
			return -1
		}
		off += i + 1
	}
	return off - 1
}

// nthNewlineFromEnd returns the index of the n-th (1-based) "\n" counted from
// the end of s, or -1.
func nthNewlineFromEnd(s string, n int) int {
	end := len(s)
	for ; n > 0; n-- {
		i := strings.LastIndexByte(s[:end], '\n')
		if i < 0 {
			return -1
		}
		end = i
	}
	return end
}

// shapeOutput applies the bash tool's head and tail arguments to a finished
// run (spec §1.6 steps 3 and 5) and returns the text for the model, its
// truncation metadata (nil when the output was not truncated) and whether a
// limit removed lines.
//
// An output that fits the in-memory tail is cut with ApplyHeadTail. For a
// truncated one the lines asked for are found by number in the whole
// output: the executor's captured first lines (BashResult.Head), the 50 KB
// tail, or, for a window in the middle, the artifact file at artifactPath
// ("" = none). Whatever is shown, the metadata describes exactly those lines
// (shownRange in the whole output's numbering, outputLines/outputBytes of
// the returned text) and keeps the artifact id, so the notice never
// describes the tail the lines were not taken from. (A capped artifact serves
// only the lines of its head: after it, its numbering is not the output's.)
// A window larger than 50 KB keeps its first 50 KB when only head applies
// and its last 50 KB otherwise (truncatedBy "bytes").
func shapeOutput(res BashResult, head, tail int, artifactPath string) (string, *OutputMeta, bool) {
	if !res.Truncated {
		ht := ApplyHeadTail(res.Output, head, tail)
		return ht.Text, nil, ht.Applied
	}
	total := res.TotalLines
	start, end := 1, total
	if head > 0 && head < end {
		end = head
	}
	if tail > 0 && end-tail+1 > start {
		start = end - tail + 1
	}
	if start == 1 && end == total {
		return res.Output, ResultMeta(res), false // the limits remove nothing
	}
	keepStart := head > 0 && (tail <= 0 || tail >= end) // only head cut lines
	bufFirst := total - res.OutputLines + 1             // its first line may be partial
	var (
		text  string
		first int
		cut   bool // the 50 KB cap, not the line limits, decided the last lines
	)
	switch {
	case res.Head != "" && end <= strings.Count(res.Head, "\n"):
		text, first = lineRange(res.Head, 1, start, end), start
	case start > bufFirst:
		text, first = lineRange(res.Output, bufFirst, start, end), start
	case end == total:
		// A window larger than the tail buffer that ends the output: its
		// last 50 KB are the buffer.
		text, first, cut = res.Output, bufFirst, true
	case start == 1 && res.Head != "":
		// Larger than the captured first lines, which are its first 50 KB.
		text, first, cut = res.Head, 1, true
	default:
		if res.ArtifactDroppedBytes > 0 && end > res.ArtifactHeadLines {
			// The capped artifact's lines after its head are numbered
			// differently from the output's (and may not be there).
			artifactPath = ""
		}
		var ok bool
		if text, first, cut, ok = readLineRange(artifactPath, start, end, keepStart); !ok {
			// Neither memory nor a file holds these lines: cut what is
			// in memory as if it were the whole output, and say which
			// lines that is.
			src, srcFirst := res.Output, bufFirst
			if res.Head != "" {
				src, srcFirst = res.Head, 1
				if i := strings.LastIndexByte(src, '\n'); i >= 0 {
					src = src[:i+1] // its last line may be cut at 50 KB
				}
			}
			ht := ApplyHeadTail(src, head, tail)
			text, first, cut = ht.Text, srcFirst, true
			if ht.TailApplied {
				first = srcFirst + countLines(ApplyHeadTail(src, head, 0).Text) - tail
			}
		}
	}
	// The captured first lines and the artifact hold every frame of a
	// progress bar; the model reads each line's final state (spec §4).
	text = sink.FinalState(text)
	n := countLines(text)
	last := first + n - 1
	dir := "tail"
	if first == 1 && last < total {
		dir = "head"
	}
	by := "lines"
	if cut {
		by = "bytes"
	}
	return text, &OutputMeta{Truncation: &TruncationMeta{
		Direction: dir, TruncatedBy: by,
		TotalLines: total, TotalBytes: res.TotalBytes,
		OutputLines: n, OutputBytes: len(text),
		ShownRange: ShownRange{Start: first, End: last},
		ArtifactID: res.ArtifactID, ArtifactDroppedBytes: res.ArtifactDroppedBytes,
	}}, true
}

// countLines counts lines as the sink does: a final line without "\n"
// counts too.
func countLines(s string) int {
	n := strings.Count(s, "\n")
	if s != "" && s[len(s)-1] != '\n' {
		n++
	}
	return n
}

// lineRange returns lines from..to (1-based, inclusive, in the numbering
// where text's first line is firstLine), each with its "\n" when it has one.
func lineRange(text string, firstLine, from, to int) string {
	i := 0
	for ln := firstLine; ln < from; ln++ {
		j := strings.IndexByte(text[i:], '\n')
		if j < 0 {
			return ""
		}
		i += j + 1
	}
	k := i
	for ln := from; ln <= to && k < len(text); ln++ {
		j := strings.IndexByte(text[k:], '\n')
		if j < 0 {
			k = len(text)
			break
		}
		k += j + 1
	}
	return text[i:k]
}

// readLineRange reads lines from..to (1-based, inclusive) of the file at
// path, at most sink.DefaultMaxBytes of them: the first ones when keepStart,
// else the last ones (which may begin inside a line, as the sink's tail
// does). first is the line the text starts with; cut reports that the byte
// cap dropped lines of the range; ok is false when the file cannot be read
// or ends before from.
func readLineRange(path string, from, to int, keepStart bool) (text string, first int, cut, ok bool) {
	if path == "" {
		return "", 0, false, false
	}
	f, err := os.Open(path)
	if err != nil {
		return "", 0, false, false
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 64<<10)
	var (
		kept    []byte
		tb      *sink.TailBuffer
		written int
	)
	if !keepStart {
		tb = sink.NewTailBuffer(sink.DefaultMaxBytes)
	}
	ln := 1
	for ln <= to {
		chunk, err := r.ReadSlice('\n')
		if ln >= from && len(chunk) > 0 {
			if keepStart {
				if room := sink.DefaultMaxBytes - len(kept); len(chunk) > room {
					if len(kept) == 0 { // one line longer than the cap: its start
						kept = append(kept, utf8Prefix(chunk, room)...)
					}
					return string(kept), from, true, true
				}
				kept = append(kept, chunk...)
			} else {
				_, _ = tb.Write(chunk)
				written += len(chunk)
			}
		}
		switch {
		case err == nil:
			ln++
		case errors.Is(err, bufio.ErrBufferFull):
			// The same line goes on.
		case errors.Is(err, io.EOF):
			if len(chunk) == 0 {
				ln-- // the file ended with "\n": no further line
			}
			to = min(to, ln)
			ln = to + 1
		default:
			return "", 0, false, false
		}
	}
	if to < from {
		return "", 0, false, false
	}
	if keepStart {
		return string(kept), from, false, true
	}
	text = tb.String()
	return text, to - countLines(text) + 1, written > len(text), true
}

// utf8Prefix returns at most n bytes of b, never ending inside a character.
func utf8Prefix(b []byte, n int) []byte {
	if len(b) <= n {
		return b
	}
	b = b[:n]
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				b = b[:i]
			}
			break
		}
	}
	return b
}

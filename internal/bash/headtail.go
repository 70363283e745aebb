package bash

import "strings"

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

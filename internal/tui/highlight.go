package tui

import (
	"strings"

	"charm.land/lipgloss/v2"
)

// Syntax highlighting of fenced code blocks. chroma's lexers doubled the
// binary and the idle RSS (decision 0003), so this is a small scanner that
// knows, per language family, the keywords, the comment markers and the
// string quotes: enough for the colours a reader expects in an answer,
// with no allocation beyond the output and nothing loaded at start.

// langSyntax is what the scanner needs to know of a language.
type langSyntax struct {
	keywords     map[string]bool
	line         []string // line comment markers
	blockOpen    string   // "" = none
	blockClose   string
	quotes       string // string delimiters
	rawBacktick  bool   // ` strings may span lines (Go, JS)
	tripleQuotes bool   // Python's """ and '''
}

func words(s string) map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(s) {
		m[w] = true
	}
	return m
}

var cLike = "if else for while do switch case default break continue return goto sizeof struct union enum typedef static const volatile extern inline void char short int long float double signed unsigned bool true false NULL nullptr class public private protected virtual template typename namespace using new delete this throw try catch auto"

var syntaxes = func() map[string]*langSyntax {
	goS := &langSyntax{keywords: words("break case chan const continue default defer else fallthrough for func go goto if import interface map package range return select struct switch type var nil true false iota any error string int int8 int16 int32 int64 uint uint8 uint16 uint32 uint64 uintptr byte rune float32 float64 bool make new len cap append copy delete panic recover"),
		line: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'`", rawBacktick: true}
	py := &langSyntax{keywords: words("False None True and as assert async await break class continue def del elif else except finally for from global if import in is lambda nonlocal not or pass raise return try while with yield self print len range"),
		line: []string{"#"}, quotes: "\"'", tripleQuotes: true}
	js := &langSyntax{keywords: words("break case catch class const continue debugger default delete do else export extends finally for function if import in instanceof let new return super switch this throw try typeof var void while with yield async await of null undefined true false interface type enum implements readonly public private protected static as from"),
		line: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'`", rawBacktick: true}
	sh := &langSyntax{keywords: words("if then else elif fi for while until do done case esac in function return local export readonly declare unset shift exit break continue source echo printf cd set trap eval exec test true false"),
		line: []string{"#"}, quotes: "\"'"}
	rust := &langSyntax{keywords: words("as async await break const continue crate dyn else enum extern false fn for if impl in let loop match mod move mut pub ref return self Self static struct super trait true type unsafe use where while Some None Ok Err Box Vec String Option Result i8 i16 i32 i64 u8 u16 u32 u64 usize isize f32 f64 bool str"),
		line: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\""}
	c := &langSyntax{keywords: words(cLike + " include define ifdef ifndef endif pragma"),
		line: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'"}
	java := &langSyntax{keywords: words(cLike + " abstract extends final implements import instanceof interface package super synchronized throws var record String Integer List Map"),
		line: []string{"//"}, blockOpen: "/*", blockClose: "*/", quotes: "\"'"}
	jsonS := &langSyntax{keywords: words("true false null"), quotes: "\""}
	yaml := &langSyntax{keywords: words("true false null yes no on off"), line: []string{"#"}, quotes: "\"'"}
	sql := &langSyntax{keywords: words("select from where insert into values update set delete create table drop alter index join left right inner outer on group by order having limit and or not null as distinct union primary key SELECT FROM WHERE INSERT INTO VALUES UPDATE SET DELETE CREATE TABLE DROP ALTER INDEX JOIN LEFT RIGHT INNER OUTER ON GROUP BY ORDER HAVING LIMIT AND OR NOT NULL AS DISTINCT UNION PRIMARY KEY"),
		line: []string{"--"}, blockOpen: "/*", blockClose: "*/", quotes: "'\""}
	m := map[string]*langSyntax{}
	for names, s := range map[string]*langSyntax{
		"go golang": goS, "python py python3": py, "javascript js jsx typescript ts tsx mjs cjs": js,
		"bash sh shell zsh console shellsession": sh, "rust rs": rust, "c h cpp c++ cc hpp cxx": c,
		"java kotlin kt scala cs csharp swift": java, "json jsonc": jsonS, "yaml yml toml ini": yaml, "sql": sql,
	} {
		for _, n := range strings.Fields(names) {
			m[n] = s
		}
	}
	return m
}()

// codeStyles colour the parts of a line.
type codeStyles struct {
	plain, keyword, str, comment, number lipgloss.Style
}

// highlighter colours the lines of one code block, keeping the state of a
// block comment or a multi-line string from line to line.
type highlighter struct {
	syn   *langSyntax
	st    codeStyles
	open  string // the delimiter a multi-line comment or string waits for; "" = none
	isStr bool
}

// newHighlighter is nil for an unknown language (the block stays in one
// colour).
func newHighlighter(lang string, st codeStyles) *highlighter {
	syn := syntaxes[strings.ToLower(strings.TrimSpace(lang))]
	if syn == nil {
		return nil
	}
	return &highlighter{syn: syn, st: st}
}

// line returns l with its tokens styled; l is one line (no newline).
func (h *highlighter) line(l string) string {
	var b strings.Builder
	i := 0
	emit := func(st lipgloss.Style, s string) {
		if s != "" {
			b.WriteString(st.Render(s))
		}
	}
	if h.open != "" { // inside a block comment or multi-line string
		end := strings.Index(l, h.open)
		st := h.st.comment
		if h.isStr {
			st = h.st.str
		}
		if end < 0 {
			emit(st, l)
			return b.String()
		}
		emit(st, l[:end+len(h.open)])
		i = end + len(h.open)
		h.open = ""
	}
	plainStart := i
	flush := func(to int) {
		if to > plainStart {
			emit(h.st.plain, l[plainStart:to])
		}
	}
	syn := h.syn
	for i < len(l) {
		rest := l[i:]
		if lineComment(syn, rest, i == 0 || l[i-1] == ' ' || l[i-1] == '\t') {
			flush(i)
			emit(h.st.comment, rest)
			return b.String()
		}
		if syn.blockOpen != "" && strings.HasPrefix(rest, syn.blockOpen) {
			flush(i)
			end := strings.Index(rest[len(syn.blockOpen):], syn.blockClose)
			if end < 0 {
				emit(h.st.comment, rest)
				h.open, h.isStr = syn.blockClose, false
				return b.String()
			}
			n := len(syn.blockOpen) + end + len(syn.blockClose)
			emit(h.st.comment, rest[:n])
			i += n
			plainStart = i
			continue
		}
		c := l[i]
		if syn.tripleQuotes && (strings.HasPrefix(rest, `"""`) || strings.HasPrefix(rest, `'''`)) {
			flush(i)
			q := rest[:3]
			end := strings.Index(rest[3:], q)
			if end < 0 {
				emit(h.st.str, rest)
				h.open, h.isStr = q, true
				return b.String()
			}
			emit(h.st.str, rest[:end+6])
			i += end + 6
			plainStart = i
			continue
		}
		if strings.IndexByte(syn.quotes, c) >= 0 {
			flush(i)
			j := i + 1
			for j < len(l) && l[j] != c {
				if l[j] == '\\' && c != '`' {
					j++
				}
				j++
			}
			if j >= len(l) && c == '`' && syn.rawBacktick {
				emit(h.st.str, rest)
				h.open, h.isStr = "`", true
				return b.String()
			}
			j = min(j+1, len(l))
			emit(h.st.str, l[i:j])
			i = j
			plainStart = i
			continue
		}
		if isWordStart(c) {
			j := i + 1
			for j < len(l) && isWordByte(l[j]) {
				j++
			}
			if syn.keywords[l[i:j]] {
				flush(i)
				emit(h.st.keyword, l[i:j])
				plainStart = j
			}
			i = j
			continue
		}
		if c >= '0' && c <= '9' && (i == 0 || !isWordByte(l[i-1])) {
			j := i + 1
			for j < len(l) && (isWordByte(l[j]) || l[j] == '.') {
				j++
			}
			flush(i)
			emit(h.st.number, l[i:j])
			i = j
			plainStart = i
			continue
		}
		i++
	}
	flush(len(l))
	return b.String()
}

// lineComment reports whether rest starts a line comment; a `#` must
// start a word (`$#`, `${#x}` and `a#b` are not comments in a shell).
func lineComment(syn *langSyntax, rest string, wordStart bool) bool {
	for _, m := range syn.line {
		if strings.HasPrefix(rest, m) && (m != "#" || wordStart) {
			return true
		}
	}
	return false
}

func isWordStart(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

func isWordByte(c byte) bool { return isWordStart(c) || c >= '0' && c <= '9' }

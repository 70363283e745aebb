package export

import (
	"bytes"
	"html"
	"net/url"
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/util"
)

// md renders assistant text: CommonMark and GFM, raw HTML shown as the
// text it is, links only to http, https and mailto, and images reduced to
// a link with their alt text, because an <img> would make the file fetch
// something when it is opened.
var md = goldmark.New(
	goldmark.WithExtensions(extension.GFM),
	goldmark.WithRendererOptions(renderer.WithNodeRenderers(util.Prioritized(safeLinks{}, 100))),
)

// renderMarkdown returns src as HTML, or src escaped in a paragraph when
// goldmark fails (it does not on any input seen, but a transcript must
// still be written).
func renderMarkdown(src string) string {
	var b bytes.Buffer
	if err := md.Convert([]byte(src), &b); err != nil {
		return "<p class=\"plain\">" + html.EscapeString(src) + "</p>\n"
	}
	return b.String()
}

// safeLinks renders links, autolinks and images in place of goldmark's own.
type safeLinks struct{}

func (safeLinks) RegisterFuncs(r renderer.NodeRendererFuncRegisterer) {
	r.Register(ast.KindLink, renderLink)
	r.Register(ast.KindAutoLink, renderAutoLink)
	r.Register(ast.KindImage, renderImage)
	r.Register(ast.KindRawHTML, renderRawHTML)
	r.Register(ast.KindHTMLBlock, renderHTMLBlock)
}

// renderRawHTML writes inline HTML escaped: the reader sees what the model
// wrote.
func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		segs := node.(*ast.RawHTML).Segments
		for i := range segs.Len() {
			seg := segs.At(i)
			_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
		}
	}
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock writes an HTML block escaped, as a paragraph keeping its
// line breaks.
func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if !entering {
		if n.HasClosure() {
			_, _ = w.WriteString(html.EscapeString(string(n.ClosureLine.Value(source))))
		}
		_, _ = w.WriteString("</p>\n")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<p class="plain">`)
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		_, _ = w.WriteString(html.EscapeString(string(seg.Value(source))))
	}
	return ast.WalkContinue, nil
}

// safeHref is u when it is an absolute http(s) or mailto address, else "".
// Control characters and spaces are refused first: browsers drop some of
// them inside a scheme, which would let "java\tscript:" through.
func safeHref(u string) string {
	if strings.IndexFunc(u, func(r rune) bool { return r <= ' ' || r == 0x7f }) >= 0 {
		return ""
	}
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	switch strings.ToLower(p.Scheme) {
	case "http", "https", "mailto":
		return p.String()
	}
	return ""
}

func writeAnchor(w util.BufWriter, href, title string) {
	_, _ = w.WriteString(`<a href="` + html.EscapeString(href) + `" rel="noopener noreferrer nofollow"`)
	if title != "" {
		_, _ = w.WriteString(` title="` + html.EscapeString(title) + `"`)
	}
	_, _ = w.WriteString(">")
}

func renderLink(w util.BufWriter, _ []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	href := safeHref(string(n.Destination))
	if href == "" {
		// The text stays, as text.
		return ast.WalkContinue, nil
	}
	if entering {
		writeAnchor(w, href, string(n.Title))
	} else {
		_, _ = w.WriteString("</a>")
	}
	return ast.WalkContinue, nil
}

func renderAutoLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.AutoLink)
	label := string(n.Label(source))
	dest := string(n.URL(source))
	if n.AutoLinkType == ast.AutoLinkEmail && !strings.HasPrefix(strings.ToLower(dest), "mailto:") {
		dest = "mailto:" + dest
	}
	if href := safeHref(dest); href != "" {
		writeAnchor(w, href, "")
		_, _ = w.WriteString(html.EscapeString(label) + "</a>")
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(html.EscapeString(label))
	return ast.WalkContinue, nil
}

// renderImage writes an image as "[image: alt]" text, a link to it when
// its address is safe to follow.
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkContinue, nil
	}
	n := node.(*ast.Image)
	alt := html.EscapeString(plainText(n, source))
	href := safeHref(string(n.Destination))
	if href == "" {
		_, _ = w.WriteString(`<span class="image">[image: ` + alt + `]</span>`)
	} else {
		writeAnchor(w, href, string(n.Title))
		_, _ = w.WriteString(`[image: ` + alt + `]</a>`)
	}
	return ast.WalkSkipChildren, nil
}

// plainText is the text of n's inline children.
func plainText(n ast.Node, source []byte) string {
	var b strings.Builder
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			b.Write(t.Segment.Value(source))
		case *ast.String:
			b.Write(t.Value)
		case *ast.CodeSpan:
			for cc := t.FirstChild(); cc != nil; cc = cc.NextSibling() {
				if tt, ok := cc.(*ast.Text); ok {
					b.Write(tt.Segment.Value(source))
				}
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

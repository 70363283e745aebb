// Package exporttest checks exported transcripts for the tests of the
// packages that write them.
package exporttest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// voidElements have no end tag.
var voidElements = map[string]bool{
	"area": true, "base": true, "br": true, "col": true, "embed": true, "hr": true, "img": true,
	"input": true, "link": true, "meta": true, "source": true, "track": true, "wbr": true,
}

// fetching elements make a browser load or run something.
var fetching = map[string]bool{
	"script": true, "img": true, "iframe": true, "frame": true, "object": true, "embed": true,
	"link": true, "source": true, "video": true, "audio": true, "base": true, "form": true,
	"svg": true, "math": true, "track": true,
}

// Check reports the first way doc falls short of a self-contained, safe,
// well-formed HTML document: it must start with <!DOCTYPE html>, tokenize
// without error, close every element it opens in order, hold one html,
// head, title and body, contain no element that fetches or runs anything,
// no event-handler or style attribute, and link only to http(s) and
// mailto addresses.
func Check(doc []byte) error {
	if !bytes.HasPrefix(doc, []byte("<!DOCTYPE html>\n")) {
		return errors.New("no <!DOCTYPE html> first")
	}
	z := html.NewTokenizer(bytes.NewReader(doc))
	var stack []string
	seen := map[string]int{}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				return fmt.Errorf("tokenize: %w", z.Err())
			}
			if len(stack) > 0 {
				return fmt.Errorf("unclosed elements %v", stack)
			}
			for _, el := range []string{"html", "head", "title", "body"} {
				if seen[el] != 1 {
					return fmt.Errorf("%d <%s> elements, want 1", seen[el], el)
				}
			}
			return nil
		case html.StartTagToken, html.SelfClosingTagToken:
			tok := z.Token()
			name := tok.Data
			seen[name]++
			if fetching[name] {
				return fmt.Errorf("a <%s> element", name)
			}
			for _, a := range tok.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") || a.Key == "style" || a.Key == "srcdoc" || a.Key == "src" {
					return fmt.Errorf("<%s> has attribute %s=%q", name, a.Key, a.Val)
				}
				if a.Key == "href" {
					u, err := url.Parse(a.Val)
					if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "mailto") {
						return fmt.Errorf("<%s> links to %q", name, a.Val)
					}
				}
			}
			if tt == html.StartTagToken && !voidElements[name] {
				stack = append(stack, name)
			}
		case html.EndTagToken:
			name := z.Token().Data
			if len(stack) == 0 || stack[len(stack)-1] != name {
				return fmt.Errorf("</%s> closes nothing open (open: %v)", name, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// Text is the text a reader of doc sees in its body, one string per text
// node (entities decoded), or an error when doc does not parse.
func Text(doc []byte) ([]string, error) {
	root, err := html.Parse(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	var out []string
	var walk func(n *html.Node, inBody bool)
	walk = func(n *html.Node, inBody bool) {
		if n.Type == html.ElementNode && n.Data == "body" {
			inBody = true
		}
		if n.Type == html.TextNode && inBody {
			out = append(out, n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, inBody)
		}
	}
	walk(root, false)
	return out, nil
}

package views

import (
	"bytes"
	"context"
	"io"
	"net/url"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/a-h/templ"
	"github.com/microcosm-cc/bluemonday"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	extast "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/renderer"
	"github.com/yuin/goldmark/renderer/html"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// Note bodies are GitHub-flavoured Markdown written by agents, so nothing is
// trusted: raw HTML shows as text, links only for http, https and mailto open
// outside, images are links, and bluemonday sanitises the result once more.

// markdown keeps line breaks; headings get no ids, which would collide with the page's.
var markdown = goldmark.New(
	goldmark.WithExtensions(
		extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute)),
		extension.Strikethrough,
		extension.Linkify,
		extension.TaskList,
	),
	goldmark.WithRendererOptions(
		html.WithHardWraps(),
		renderer.WithNodeRenderers(util.Prioritized(noteNodes{}, 100)),
	),
)

// linkRel: no ranking credit, no handle on the app's window, no Referer.
const linkRel = "nofollow noopener noreferrer"

// noteNodes renders the nodes whose default HTML the app does not want.
type noteNodes struct{}

func (noteNodes) RegisterFuncs(reg renderer.NodeRendererFuncRegisterer) {
	reg.Register(ast.KindLink, renderLink)
	reg.Register(ast.KindAutoLink, renderAutoLink)
	reg.Register(ast.KindImage, renderImage)
	reg.Register(ast.KindRawHTML, renderRawHTML)
	reg.Register(ast.KindHTMLBlock, renderHTMLBlock)
	reg.Register(extast.KindTaskCheckBox, renderTaskCheckBox)
}

// renderTaskCheckBox writes a read-only box named for screen readers.
func renderTaskCheckBox(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		if node.(*extast.TaskCheckBox).IsChecked {
			_, _ = w.WriteString(`<input type="checkbox" checked disabled aria-label="done"> `)
		} else {
			_, _ = w.WriteString(`<input type="checkbox" disabled aria-label="to do"> `)
		}
	}
	return ast.WalkContinue, nil
}

// safeURL admits absolute http(s) with a host or mailto with an address; not
// "https://#", which a sanitizer would shorten to a bare "https:".
func safeURL(raw []byte) (string, bool) {
	u := strings.TrimSpace(string(raw))
	lower := strings.ToLower(u)
	for _, scheme := range []string{"http://", "https://", "mailto:"} {
		if !strings.HasPrefix(lower, scheme) || len(u) == len(scheme) {
			continue
		}
		p, err := url.Parse(u)
		if err != nil || (scheme == "mailto:" && p.Opaque == "") || (scheme != "mailto:" && p.Host == "") {
			return "", false
		}
		return string(util.URLEscape([]byte(u), true)), true
	}
	return "", false
}

func openLink(w util.BufWriter, href string, class string) {
	_, _ = w.WriteString(`<a href="`)
	_, _ = w.Write(util.EscapeHTML([]byte(href)))
	_, _ = w.WriteString(`" rel="` + linkRel + `" target="_blank"`)
	if class != "" {
		_, _ = w.WriteString(` class="` + class + `"`)
	}
	_ = w.WriteByte('>')
}

// renderLink writes a link out of the app; any other URL leaves its text alone.
func renderLink(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.Link)
	href, ok := safeURL(n.Destination)
	if !ok {
		return ast.WalkContinue, nil
	}
	if entering {
		openLink(w, href, "")
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
	url := n.URL(source)
	if n.AutoLinkType == ast.AutoLinkEmail && !bytes.HasPrefix(bytes.ToLower(url), []byte("mailto:")) {
		url = append([]byte("mailto:"), url...)
	}
	label := util.EscapeHTML(n.Label(source))
	href, ok := safeURL(url)
	if !ok {
		_, _ = w.Write(label)
		return ast.WalkContinue, nil
	}
	openLink(w, href, "")
	_, _ = w.Write(label)
	_, _ = w.WriteString("</a>")
	return ast.WalkContinue, nil
}

// renderImage writes a link: the page never loads what an agent points at.
func renderImage(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if !entering {
		return ast.WalkSkipChildren, nil
	}
	n := node.(*ast.Image)
	alt := util.EscapeHTML([]byte(plainText(n, source, false)))
	href, ok := safeURL(n.Destination)
	if ok {
		openLink(w, href, "md-image")
	}
	_, _ = w.WriteString("image: ")
	_, _ = w.Write(alt)
	if ok {
		_, _ = w.WriteString("</a>")
	}
	return ast.WalkSkipChildren, nil
}

// renderRawHTML writes inline HTML as text ("Vec<String>" stays readable).
func renderRawHTML(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	if entering {
		n := node.(*ast.RawHTML)
		for i := range n.Segments.Len() {
			seg := n.Segments.At(i)
			_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
		}
	}
	return ast.WalkSkipChildren, nil
}

// renderHTMLBlock writes a block of HTML as text, its lines kept.
func renderHTMLBlock(w util.BufWriter, source []byte, node ast.Node, entering bool) (ast.WalkStatus, error) {
	n := node.(*ast.HTMLBlock)
	if !entering {
		return ast.WalkContinue, nil
	}
	_, _ = w.WriteString(`<p class="md-raw">`)
	lines := n.Lines()
	for i := range lines.Len() {
		seg := lines.At(i)
		_, _ = w.Write(util.EscapeHTML(seg.Value(source)))
	}
	if n.HasClosure() {
		_, _ = w.Write(util.EscapeHTML(n.ClosureLine.Value(source)))
	}
	_, _ = w.WriteString("</p>\n")
	return ast.WalkSkipChildren, nil
}

// plainText is a node's inline text; with firstLine, up to the first break.
func plainText(n ast.Node, source []byte, firstLine bool) string {
	var b strings.Builder
	done := false
	_ = ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || done {
			return ast.WalkContinue, nil
		}
		switch t := c.(type) {
		case *ast.Text:
			v := t.Segment.Value(source)
			if !t.IsRaw() {
				v = util.UnescapePunctuations(util.ResolveNumericReferences(util.ResolveEntityNames(v)))
			}
			b.Write(v)
			if t.SoftLineBreak() || t.HardLineBreak() {
				done = firstLine
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(t.Value)
		case *ast.AutoLink:
			b.Write(t.Label(source))
		case *ast.RawHTML:
			for i := range t.Segments.Len() {
				seg := t.Segments.At(i)
				b.Write(seg.Value(source))
			}
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// sanitizer admits what the renderer makes and nothing else.
var sanitizer = func() *bluemonday.Policy {
	p := bluemonday.NewPolicy()
	p.AllowElements("p", "br", "hr", "strong", "em", "del", "code", "pre", "blockquote",
		"ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "table", "thead", "tbody", "tr", "th", "td")
	p.AllowAttrs("href").OnElements("a")
	p.AllowURLSchemes("http", "https", "mailto")
	p.RequireParseableURLs(true)
	p.AllowRelativeURLs(false)
	p.AllowAttrs("rel").Matching(regexp.MustCompile(`^` + linkRel + `$`)).OnElements("a")
	p.AllowAttrs("target").Matching(regexp.MustCompile(`^_blank$`)).OnElements("a")
	p.RequireNoFollowOnLinks(true)
	p.RequireNoReferrerOnLinks(true)
	p.AddTargetBlankToFullyQualifiedLinks(true)
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^md-image$`)).OnElements("a")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^language-[\w+#.-]{1,40}$`)).OnElements("code")
	p.AllowAttrs("class").Matching(regexp.MustCompile(`^md-raw$`)).OnElements("p")
	p.AllowAttrs("start").Matching(regexp.MustCompile(`^\d{1,9}$`)).OnElements("ol")
	p.AllowAttrs("align").Matching(regexp.MustCompile(`^(left|center|right)$`)).OnElements("th", "td")
	p.AllowAttrs("type").Matching(regexp.MustCompile(`^checkbox$`)).OnElements("input")
	p.AllowAttrs("checked", "disabled").Matching(regexp.MustCompile(`^$`)).OnElements("input")
	p.AllowAttrs("aria-label").Matching(regexp.MustCompile(`^(done|to do)$`)).OnElements("input")
	return p
}()

// RenderMarkdown renders a note body as safe HTML, or as text when it is built
// to make the parser work hard (tooIntricate).
func RenderMarkdown(body string) string {
	var buf bytes.Buffer
	if tooIntricate(body) || markdown.Convert([]byte(body), &buf) != nil {
		return asText(body)
	}
	return sanitizer.Sanitize(buf.String())
}

// asText is a body as escaped text with its line breaks, in one paragraph.
func asText(body string) string {
	return `<p class="md-raw">` + templ.EscapeString(body) + `</p>`
}

// Past these a body is text: parse time grows with the square of containers
// nested on one line and of unclosed link destinations. No person's note nears them.
const (
	maxNesting = 16
	maxLinks   = 500
)

// tooIntricate reports whether a body passes those limits.
func tooIntricate(body string) bool {
	if strings.Count(body, "](") > maxLinks {
		return true
	}
	for line := range strings.SplitSeq(body, "\n") {
		if nesting(line) > maxNesting {
			return true
		}
	}
	return false
}

// nesting counts the container markers a line opens.
func nesting(line string) int {
	depth := 0
	for i := 0; i < len(line); {
		switch c := line[i]; {
		case c == ' ' || c == '\t':
			i++
		case c == '>':
			depth++
			i++
		case (c == '-' || c == '*' || c == '+') && i+1 < len(line) && (line[i+1] == ' ' || line[i+1] == '\t'):
			depth++
			i += 2
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j+1 >= len(line) || (line[j] != '.' && line[j] != ')') || (line[j+1] != ' ' && line[j+1] != '\t') {
				return depth
			}
			depth++
			i = j + 2
		default:
			return depth
		}
	}
	return depth
}

// Markdown is a note body rendered (RenderMarkdown), for templates.
func Markdown(body string) templ.Component {
	return templ.ComponentFunc(func(_ context.Context, w io.Writer) error {
		_, err := io.WriteString(w, RenderMarkdown(body))
		return err
	})
}

// FirstLine is a body's first block as text, cut to max: how a reply quotes.
func FirstLine(body string, max int) string {
	source := []byte(body)
	doc := markdown.Parser().Parse(text.NewReader(source), parser.WithContext(parser.NewContext()))
	line := ""
	_ = ast.Walk(doc, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering || line != "" {
			return ast.WalkContinue, nil
		}
		switch c.Kind() {
		case ast.KindFencedCodeBlock, ast.KindCodeBlock, ast.KindHTMLBlock:
			if lines := c.Lines(); lines.Len() > 0 {
				seg := lines.At(0)
				line = string(seg.Value(source))
			}
		case ast.KindParagraph, ast.KindHeading, ast.KindTextBlock, extast.KindTableCell:
			line = plainText(c, source, true)
		default:
			return ast.WalkContinue, nil
		}
		line = strings.Join(strings.Fields(line), " ")
		return ast.WalkSkipChildren, nil
	})
	if utf8.RuneCountInString(line) > max {
		line = strings.TrimSpace(string([]rune(line)[:max])) + "…"
	}
	return line
}

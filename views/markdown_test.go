package views

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// markdownTags are the elements RenderMarkdown may produce; safeAttrs the
// attributes, each with the values it may take.
var (
	markdownTags = map[string]bool{
		"p": true, "br": true, "hr": true, "strong": true, "em": true, "del": true, "code": true, "pre": true,
		"blockquote": true, "ul": true, "ol": true, "li": true, "h1": true, "h2": true, "h3": true, "h4": true,
		"h5": true, "h6": true, "table": true, "thead": true, "tbody": true, "tr": true, "th": true, "td": true,
		"a": true, "input": true,
	}
	safeAttrs = map[string]*regexp.Regexp{
		"a.href":           regexp.MustCompile(`^(https?://|mailto:)`),
		"a.rel":            regexp.MustCompile(`^nofollow noopener noreferrer$`),
		"a.target":         regexp.MustCompile(`^_blank$`),
		"a.class":          regexp.MustCompile(`^md-image$`),
		"code.class":       regexp.MustCompile(`^language-[\w+#.-]+$`),
		"p.class":          regexp.MustCompile(`^md-raw$`),
		"ol.start":         regexp.MustCompile(`^\d+$`),
		"th.align":         regexp.MustCompile(`^(left|center|right)$`),
		"td.align":         regexp.MustCompile(`^(left|center|right)$`),
		"input.type":       regexp.MustCompile(`^checkbox$`),
		"input.checked":    regexp.MustCompile(`^$`),
		"input.disabled":   regexp.MustCompile(`^$`),
		"input.aria-label": regexp.MustCompile(`^(done|to do)$`),
	}
)

// checkSafe fails unless every element under sel is one the renderer makes,
// with only its attributes and their values: no script, no handler, no
// style, no image, no link that is not http, https or mailto.
func checkSafe(t testing.TB, sel *goquery.Selection, out string) {
	t.Helper()
	sel.Find("*").Each(func(_ int, s *goquery.Selection) {
		node := s.Get(0)
		if !markdownTags[node.Data] {
			t.Fatalf("element <%s> in the rendered body:\n%s", node.Data, out)
		}
		for _, a := range node.Attr {
			re := safeAttrs[node.Data+"."+a.Key]
			if re == nil || !re.MatchString(a.Val) {
				t.Fatalf("attribute %s=%q on <%s> in the rendered body:\n%s", a.Key, a.Val, node.Data, out)
			}
		}
	})
}

// rendered parses RenderMarkdown's output and checks it is safe.
func rendered(t testing.TB, body string) (*goquery.Selection, string) {
	t.Helper()
	out := RenderMarkdown(body)
	nodes, err := html.ParseFragment(strings.NewReader(out), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		t.Fatalf("output does not parse: %v", err)
	}
	root := &html.Node{Type: html.ElementNode, Data: "div"}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	sel := goquery.NewDocumentFromNode(root).Selection
	checkSafe(t, sel, out)
	return sel, out
}

func TestMarkdownRenders(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, body string
		want       []string // each must be in the output
	}{
		{"heading and emphasis", "## Plan\n**bold** _it_ ~~gone~~", []string{"<h2>Plan</h2>", "<strong>bold</strong>", "<em>it</em>", "<del>gone</del>"}},
		{"line breaks kept", "one\ntwo", []string{"one<br>\ntwo"}},
		{"task list", "- [x] done\n- [ ] todo", []string{`<input type="checkbox" checked="" disabled="" aria-label="done"> done`, `<input type="checkbox" disabled="" aria-label="to do"> todo`}},
		{"table", "| a | b |\n|:--|--:|\n| 1 | 2 |", []string{"<table>", `<th align="left">a</th>`, `<td align="right">2</td>`}},
		{"fenced code keeps its language", "```go\nfunc main() {}\n```", []string{`<pre><code class="language-go">func main() {}`}},
		{"autolink", "see https://example.com/a?b=1&c=2 or www.example.org", []string{
			`<a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener noreferrer" target="_blank">https://example.com/a?b=1&amp;c=2</a>`,
			`<a href="http://www.example.org" rel="nofollow noopener noreferrer" target="_blank">www.example.org</a>`}},
		{"link", "[docs](https://example.com/docs \"t\")", []string{`<a href="https://example.com/docs" rel="nofollow noopener noreferrer" target="_blank">docs</a>`}},
		{"email", "mail ada@example.com", []string{`<a href="mailto:ada@example.com" rel="nofollow noopener noreferrer" target="_blank">ada@example.com</a>`}},
		{"remote image becomes a link", "![chart](https://evil.example/pixel.png)", []string{
			`<a href="https://evil.example/pixel.png" rel="nofollow noopener noreferrer" target="_blank" class="md-image">image: chart</a>`}},
		{"raw HTML is text", "Vec<String> and <b>bold</b>", []string{"Vec&lt;String&gt; and &lt;b&gt;bold&lt;/b&gt;"}},
		{"HTML block is text", "<div onclick=alert(1)>\nhi\n</div>", []string{`<p class="md-raw">&lt;div onclick=alert(1)&gt;`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, out := rendered(t, c.body)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("no %q in:\n%s", w, out)
				}
			}
		})
	}
}

// TestMarkdownRefuses: what an agent could write to reach the owner's
// browser never survives, however it is dressed up.
func TestMarkdownRefuses(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"script tag":              "<script>alert(1)</script>",
		"script inline":           "a <script>alert(1)</script> b",
		"event handler":           `<img src=x onerror=alert(1)> <svg onload=alert(1)> <a href="https://x.example" onclick="alert(1)">x</a>`,
		"javascript link":         "[x](javascript:alert(1))",
		"javascript mixed case":   "[x](JaVaScRiPt:alert(1))",
		"javascript entity":       "[x](java&#x09;script:alert(1)) [y](&#106;avascript:alert(1))",
		"javascript spaces":       "[x]( javascript:alert(1) )",
		"javascript autolink":     "<javascript:alert(1)>",
		"vbscript and data":       "[x](vbscript:msgbox(1)) [y](data:text/html;base64,PHNjcmlwdD4=) ![z](data:image/svg+xml;base64,PHN2Zz4=)",
		"relative and protocol":   "[x](/logout) [y](//evil.example/x) [z](?a=1)",
		"image in a link":         "[![x](https://evil.example/a.png)](https://evil.example)",
		"HTML in link text":       "[<img src=x onerror=alert(1)>](https://example.com)",
		"nested emphasis and tag": "**<i onmouseover=alert(1)>*x*</i>**",
		"reference link":          "[x][1]\n\n[1]: javascript:alert(1)",
		"details and style":       "<details open ontoggle=alert(1)><summary>x</summary></details><style>*{display:none}</style>",
		"iframe and object":       "<iframe src=https://evil.example></iframe><object data=x></object><embed src=x>",
		"form and input":          "<form action=https://evil.example><input name=q><button>go</button></form>",
		"comment trick":           "<!-- --><script>alert(1)</script><!-- -->",
		"entity-encoded tag":      "&lt;script&gt;alert(1)&lt;/script&gt;",
		"code span with tag":      "`<script>alert(1)</script>`",
		"fence with tag":          "```html\n<script>alert(1)</script>\n```",
		"fence language trick":    "```\" onmouseover=\"alert(1)\n x\n```",
		"link title trick":        `[x](https://example.com "\" onmouseover=\"alert(1)")`,
		"table cell with HTML":    "| <img src=x onerror=alert(1)> |\n|---|\n| <script>x</script> |",
		"backticks":               strings.Repeat("`", 10000),
		"backtick pairs":          strings.Repeat("` ", 5000),
		"deep blockquotes":        strings.Repeat(">", 10000),
		"deep lists":              strings.Repeat("1. ", 3333),
		"unclosed links":          strings.Repeat("[a](", 2500),
		"brackets":                strings.Repeat("[", 10000),
		"emphasis runs":           strings.Repeat("*a ", 3333),
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			sel, out := rendered(t, body)
			took := time.Since(start)
			if strings.Contains(strings.ToLower(out), "<script") || strings.Contains(strings.ToLower(out), "javascript:") && sel.Find(`a[href*="javascript"]`).Length() > 0 {
				t.Fatalf("unsafe output:\n%s", out)
			}
			if sel.Find("img, [src], [style]").Length() > 0 {
				t.Fatalf("something loads or styles:\n%s", out)
			}
			if len(out) > 40*len(body)+100 {
				t.Errorf("%d bytes of output for %d of input", len(out), len(body))
			}
			// Generous: the point is that nothing is quadratic in a 10,000-character body.
			if took > 2*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

func TestFirstLine(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]string{
		"## Plan\nmore":                "Plan",
		"first line\nsecond":           "first line",
		"\n\n  **bold** and `code`\n":  "bold and code",
		"- [x] item one\n- item two":   "item one",
		"```go\nfunc main() {}\n```":   "func main() {}",
		"&lt;b&gt; \\*not\\* emphasis": "<b> *not* emphasis",
		"[a link](https://x.example)":  "a link",
		"":                             "",
		strings.Repeat("word ", 50):    strings.TrimSpace(strings.Repeat("word ", 24)) + "…",
	} {
		if got := FirstLine(body, 120); got != want {
			t.Errorf("FirstLine(%q) = %q, want %q", body, got, want)
		}
	}
}

// FuzzMarkdown renders fuzzed bodies: never a panic, and only the
// renderer's own elements and attributes in what comes out.
func FuzzMarkdown(f *testing.F) {
	for _, s := range []string{"# x\n- [ ] y\n| a |\n|---|\n| b |", "[x](javascript:alert(1))", "<img src=x onerror=alert(1)>",
		"![a](https://x.example/a.png)", "```go\ncode\n```", "> > > deep", "www.example.com <b>x</b>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		body = storable(body)
		if len(body) > 10000 {
			body = body[:10000]
		}
		rendered(t, body)
	})
}

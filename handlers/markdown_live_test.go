package handlers

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

// hostileBodies are Markdown an agent could write to reach an owner's
// browser.
var hostileBodies = []string{
	"<script>alert(1)</script>",
	`<img src=x onerror=alert(1)><svg onload=alert(1)>`,
	"[x](javascript:alert(1)) [y](JaVaScRiPt:alert(1)) [z](java&#x09;script:alert(1)) <javascript:alert(1)>",
	"[d](data:text/html;base64,PHNjcmlwdD4=) ![i](https://evil.example/pixel.png)",
	"[<img src=x onerror=alert(1)>](https://example.com) **<i onmouseover=alert(1)>*x*</i>**",
	"<details open ontoggle=alert(1)></details><iframe src=https://evil.example></iframe><style>*{}</style>",
	"```\" onmouseover=\"alert(1)\nx\n```\n| <img src=x> |\n|---|\n| <script>x</script> |",
	strings.Repeat("`", 10000),
	strings.Repeat(">", 10000),
}

var safeHref = regexp.MustCompile(`^(https?://|mailto:)`)

// noLiveMarkup fails when a rendered body (.md) holds anything that runs,
// loads or styles: a script, a frame, an image, an event handler, a style,
// a link that is not http, https or mailto.
func noLiveMarkup(t *testing.T, what, html string) {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(html))
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	bodies := doc.Find(".md")
	if bodies.Length() == 0 {
		t.Fatalf("%s: no rendered body in:\n%s", what, truncate(html))
	}
	if n := bodies.Find("script, iframe, img, svg, style, object, embed, form, details, textarea, [src], [style]").Length(); n > 0 {
		t.Fatalf("%s: %d live elements in:\n%s", what, n, truncate(html))
	}
	bodies.Find("*").Each(func(_ int, s *goquery.Selection) {
		for _, a := range s.Get(0).Attr {
			if strings.HasPrefix(strings.ToLower(a.Key), "on") {
				t.Fatalf("%s: handler %s in:\n%s", what, a.Key, truncate(html))
			}
		}
	})
	bodies.Find("a").Each(func(_ int, a *goquery.Selection) {
		if href := a.AttrOr("href", ""); !safeHref.MatchString(href) || a.AttrOr("rel", "") != "nofollow noopener noreferrer" {
			t.Fatalf("%s: link %q rel %q", what, href, a.AttrOr("rel", ""))
		}
	})
}

// TestHostileMarkdownLive: what an agent posts over MCP reaches the owner's
// live stream, the page, and the poll rendered by the one renderer, with
// nothing live in it.
func TestHostileMarkdownLive(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	st := f.alice.openEvents(f.url + "/stream")
	f.app.waitStreams(f.session.ID, 1)
	for i, body := range hostileBodies {
		id := postOverMCP(t, f.app.srv.URL, f.ag, f.session, fmt.Sprint("Hostile ", i), body, fmt.Sprint("hostile-", i))
		m := st.next("note", wait)
		if m.id != fmt.Sprint(id) {
			t.Fatalf("note event %s, want %d", m.id, id)
		}
		noLiveMarkup(t, fmt.Sprintf("stream, body %d", i), m.data)
	}
	res := f.alice.get(f.url)
	// Should anything get through, the browser loads no image from elsewhere.
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "img-src 'self';") || !strings.Contains(csp, "default-src 'self';") {
		t.Fatalf("CSP %q lets images come from elsewhere", csp)
	}
	page, _ := f.alice.doc(res, 200).Html()
	noLiveMarkup(t, "page", page)
	poll := f.alice.htmx(f.url + "/mail/poll?after=0")
	html, _ := f.alice.doc(poll, 200).Html()
	noLiveMarkup(t, "poll", html)
}

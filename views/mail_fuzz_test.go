package views

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
)

// mailRowTags are the elements a Team mail row is made of outside its body
// (whose Markdown checkSafe checks); anything else in the output came from
// the note's text.
var mailRowTags = map[string]bool{
	"html": true, "head": true, "body": true, // added by the parser
	"li": true, "div": true, "span": true, "strong": true, "code": true, "h3": true,
	"details": true, "summary": true, "time": true, "a": true,
}

// storable makes a fuzzed string one the store could hold: valid UTF-8 and
// no NUL (the web app and the MCP endpoint refuse both before any write).
func storable(s string) string {
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// parsed is what an HTML parser makes of text: line endings normalised.
func parsed(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "\r\n", "\n"), "\r", "\n")
}

// fuzzNote builds the note a row renders from fuzzed fields; mode picks the
// sender kind, the message type and whether a recipient is set.
func fuzzNote(mode byte, subject, body, name, slug, recipient string) store.Note {
	n := store.Note{ID: 42, SessionID: 7, SenderKind: store.SenderOwner, SenderSlug: slug, SenderName: name,
		MessageType: store.MessageNote, Subject: subject, Body: body, CreatedAt: time.Unix(1_700_000_000, 0)}
	if mode&1 != 0 {
		n.SenderKind = store.SenderAgent
	}
	switch mode >> 1 % 3 {
	case 1:
		n.MessageType = store.MessageReply
	case 2:
		n.MessageType = store.MessageAnalysis
	}
	if mode&8 != 0 {
		n.RecipientSlug = &recipient
	}
	return n
}

func renderRow(t *testing.T, n store.Note, unread bool) string {
	var buf bytes.Buffer
	if err := MailRows(n.SessionID, []MailRow{{Note: n, Unread: unread}}).Render(context.Background(), &buf); err != nil {
		t.Fatalf("render: %v", err)
	}
	return buf.String()
}

// FuzzMailRow renders one Team mail row from fuzzed subject, body, sender
// name, sender slug and recipient: it never panics, parses as HTML, holds
// only the row's own elements around a body that holds only what the
// Markdown renderer makes (checkSafe), and every other field reads back as
// the exact text it was given (so nothing in it was taken as markup).
func FuzzMailRow(f *testing.F) {
	f.Add(byte(1), "Started", "Working on it.\nLine two.", "Claude", "ext-alice-claude", "owner")
	f.Add(byte(9), `<script>alert(1)</script>`, `</div><img src=x onerror=alert(1)>`, `"><b>x</b>`, `ext-'"><i>`, `</code><script>`)
	f.Add(byte(4), "&amp; &lt; <!-- -->", strings.Repeat("long line <b>\n", 40), "", "", "")
	f.Fuzz(func(t *testing.T, mode byte, subject, body, name, slug, recipient string) {
		subject, body, name, slug, recipient = storable(subject), storable(body), storable(name), storable(slug), storable(recipient)
		n := fuzzNote(mode, subject, body, name, slug, recipient)
		out := renderRow(t, n, mode&16 != 0)

		if !utf8.ValidString(out) {
			t.Fatalf("output is not valid UTF-8")
		}
		if strings.Contains(strings.ToLower(out), "<script") {
			t.Fatalf("output holds a script tag:\n%s", out)
		}
		// Every markup character in the output is the row's own or its
		// body's: a row whose other fields are masked to plain letters (same
		// lengths and lines, so the same shape) and whose body is the same
		// has exactly as many. A '<' in any plain-text field therefore never
		// reaches the output as a '<'.
		mask := func(s string) string {
			return strings.Map(func(r rune) rune {
				if r == '\n' {
					return r
				}
				return 'x'
			}, s)
		}
		blank := renderRow(t, fuzzNote(mode, mask(subject), body, mask(name), mask(slug), mask(recipient)), mode&16 != 0)
		for _, ch := range []string{"<", ">", `"`, "'"} {
			if got, want := strings.Count(out, ch), strings.Count(blank, ch); got != want {
				t.Fatalf("%d %q in the output, the row's markup has %d: a field was not escaped:\n%s", got, ch, want, out)
			}
		}

		doc, err := goquery.NewDocumentFromReader(strings.NewReader(out))
		if err != nil {
			t.Fatalf("output does not parse as HTML: %v", err)
		}
		bodySel := doc.Find(`[data-testid="note-body"]`)
		if bodySel.Length() != 1 {
			t.Fatalf("%d bodies:\n%s", bodySel.Length(), out)
		}
		bodySel.Find(".md").Each(func(_ int, md *goquery.Selection) { checkSafe(t, md, out) })
		if bodySel.Is(".md") {
			checkSafe(t, bodySel, out)
		}
		doc.Find("*").Each(func(_ int, s *goquery.Selection) {
			node := s.Get(0)
			if s.ParentsFiltered(".md").Length() > 0 {
				return // the body's Markdown, checked above
			}
			if !mailRowTags[node.Data] {
				t.Fatalf("unexpected element <%s> in:\n%s", node.Data, out)
			}
			for _, a := range node.Attr {
				if strings.HasPrefix(strings.ToLower(a.Key), "on") {
					t.Fatalf("event handler attribute %s in:\n%s", a.Key, out)
				}
			}
		})
		if got := doc.Find(`[data-testid="note"]`).Length(); got != 1 {
			t.Fatalf("%d rows, want 1:\n%s", got, out)
		}
		readBack := func(testid, want string) {
			t.Helper()
			sel := doc.Find(`[data-testid="` + testid + `"]`)
			if sel.Length() != 1 {
				t.Fatalf("%d %s elements, want 1:\n%s", sel.Length(), testid, out)
			}
			if got := strings.TrimSpace(sel.Text()); got != strings.TrimSpace(parsed(want)) {
				t.Fatalf("%s reads back %q, want %q:\n%s", testid, got, want, out)
			}
		}
		readBack("note-sender-name", name)
		readBack("note-sender-slug", slug)
		if subject != "" {
			readBack("note-subject", subject)
		}
		if n.RecipientSlug != nil {
			readBack("note-recipient", recipient)
		}
		// A body of plain words reads back as those words.
		if plainWords.MatchString(body) {
			text := bodySel.Text()
			if full := bodySel.Find(".full"); full.Length() == 1 {
				text = full.Text()
			}
			if got, want := strings.Join(strings.Fields(text), " "), strings.Join(strings.Fields(body), " "); got != want {
				t.Fatalf("body reads back %q, want %q:\n%s", got, want, out)
			}
		}
		if n.FromAgent() {
			label := doc.Find(`[data-testid="reply-button"]`).AttrOr("aria-label", "")
			if want := parsed("Reply to " + slug + ": " + subject); label != want {
				t.Fatalf("reply label %q, want %q", label, want)
			}
		}
	})
}

// plainWords is a body without a character Markdown gives a meaning to.
var plainWords = regexp.MustCompile(`^[A-Za-z0-9 \n]*$`)

package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"
)

func rowIDs(doc *goquery.Document, testid string) []int64 {
	var ids []int64
	doc.Find(`[data-testid="` + testid + `"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := strconv.ParseInt(s.AttrOr("data-note-id", ""), 10, 64)
		ids = append(ids, id)
	})
	return ids
}

// TestInboxPage: the inbox lists what is addressed to owners across
// sessions, unread in bold, each opening its note in place; its views and
// filters narrow it; its live fetch brings only newer rows; "Mark all read"
// reads everything; another workspace's owner sees none of it.
func TestInboxPage(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	other := f.alice.session(f.p, "Second session")
	f.app.invite(other, f.ag)
	first := f.app.agentNote(f.ag, f.session.ID, "Started "+xss, "**Working** on it.\n"+xss)
	second := f.app.agentNote(f.ag, other.ID, "Blocked", "Need a key.")
	// The owner's own note is not in her inbox.
	f.alice.doc(f.alice.postHTMX(f.url+"/mail", url.Values{"type": {"note"}, "body": {"mine"}, "after": {"0"}}), http.StatusOK)

	doc := f.alice.doc(f.alice.get("/inbox"), http.StatusOK)
	html, _ := doc.Html()
	noRawXSS(t, html)
	if got := rowIDs(doc, "inbox-note"); len(got) != 2 || got[0] != second || got[1] != first {
		t.Fatalf("inbox %v, want [%d %d]", got, second, first)
	}
	// Posting in the first session read it; the second is unread.
	if un := doc.Find(fmt.Sprintf("#inbox-%d", second)); !un.HasClass("unread") || un.Find(`[data-testid="note-unread"]`).Length() != 1 {
		t.Error("an unread note is not marked")
	}
	row := doc.Find(fmt.Sprintf("#inbox-%d", first))
	if row.HasClass("unread") {
		t.Error("a read note is marked unread")
	}
	if got := row.Find(`[data-testid="inbox-open"]`).AttrOr("href", ""); got != fmt.Sprintf("%s?note=%d#note-%d", f.url, first, first) {
		t.Errorf("the row opens %q", got)
	}
	if got := row.Find(`[data-testid="inbox-session"]`).Text(); got != "Release week" {
		t.Errorf("the row is in %q", got)
	}
	// A compact row: the subject, then the body's first line as plain text.
	if got := row.Find(`[data-testid="note-first-line"]`).Text(); got != "Working on it." {
		t.Errorf("the row's first line is %q", got)
	}
	if doc.Find(`nav.topnav a[aria-current="page"]`).Text() == "" || doc.Find(`[data-testid="nav-inbox"]`).AttrOr("aria-current", "") != "page" {
		t.Error("the navigation does not mark the inbox")
	}
	if doc.Find(`[data-unread-stream]`).Length() < 1 || doc.Find(`[data-unread-stream]`).First().AttrOr("data-unread-scope", "") != "inbox" {
		t.Error("the inbox does not listen to the unread counts")
	}

	// Views and filters.
	for q, want := range map[string][]int64{
		"?show=mine":                             nil,
		"?show=questions":                        nil,
		fmt.Sprintf("?agent=%d", f.ag.connID):    {second, first},
		fmt.Sprintf("?project=%d", f.p.ID+1000):  nil,
		fmt.Sprintf("?before=%d", second):        {first},
		fmt.Sprintf("?show=unread&agent=%d", 99): nil,
	} {
		if got := rowIDs(f.alice.doc(f.alice.get("/inbox"+q), http.StatusOK), "inbox-note"); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("/inbox%s: %v, want %v", q, got, want)
		}
	}
	if empty := f.alice.doc(f.alice.get("/inbox?show=questions"), http.StatusOK).Find(`[data-testid="inbox-empty"]`).Text(); !strings.Contains(empty, "No questions are waiting") {
		t.Errorf("the questions view says %q", empty)
	}

	// The live fetch: newer rows only, 204 when there are none.
	if res := f.alice.htmx(fmt.Sprintf("/inbox?live=1&after=%d", second)); res.StatusCode != http.StatusNoContent {
		t.Fatalf("fetch with nothing new: %d", res.StatusCode)
	}
	third := f.app.agentNote(f.ag, f.session.ID, "Done", "PR is up.")
	fetched := f.alice.doc(f.alice.htmx(fmt.Sprintf("/inbox?live=1&after=%d", second)), http.StatusOK)
	if got := rowIDs(fetched, "inbox-note"); len(got) != 1 || got[0] != third || fetched.Find("main, h1").Length() != 0 {
		t.Fatalf("fetch %v, want the new row alone", got)
	}

	// Another workspace's owner sees an empty inbox, and cannot mark ours.
	unread := rowIDs(f.alice.doc(f.alice.get("/inbox?show=unread"), http.StatusOK), "inbox-note")
	if len(unread) != 2 {
		t.Fatalf("unread %v, want the second session's two", unread)
	}
	bob := f.app.owner("bob@example.com", "Bob's")
	bobDoc := f.alice.doc(bob.get("/inbox"), http.StatusOK)
	if n := bobDoc.Find(`[data-testid="inbox-note"]`).Length(); n != 0 {
		t.Fatalf("bob sees %d of alice's notes", n)
	}
	if res := bob.post("/inbox/read", url.Values{}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("bob marks his own: %d", res.StatusCode)
	}
	if got := rowIDs(f.alice.doc(f.alice.get("/inbox?show=unread"), http.StatusOK), "inbox-note"); fmt.Sprint(got) != fmt.Sprint(unread) {
		t.Fatalf("bob's mark-all-read read alice's notes: %v unread", got)
	}

	// Mark all read.
	res := f.alice.post("/inbox/read", url.Values{})
	if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/inbox" {
		t.Fatalf("mark all read: %d to %q", res.StatusCode, res.Header.Get("Location"))
	}
	doc = f.alice.doc(f.alice.get("/inbox"), http.StatusOK)
	if doc.Find(".inbox-row.unread").Length() != 0 || len(rowIDs(doc, "inbox-note")) != 3 {
		t.Fatal("notes still unread after marking all read")
	}
	if got := rowIDs(f.alice.doc(f.alice.get("/inbox?show=unread"), http.StatusOK), "inbox-note"); len(got) != 0 {
		t.Fatalf("unread after marking all read: %v", got)
	}
}

// TestSessionStreamCarriesUnread: the session page's stream starts with
// the owner's unread counts (the navigation's inbox count) and follows them.
func TestSessionStreamCarriesUnread(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	elsewhere := f.alice.session(f.p, "Elsewhere")
	f.app.invite(elsewhere, f.ag)
	f.app.agentNote(f.ag, elsewhere.ID, "one", "b")
	st := f.alice.openEvents(f.url + "/stream")
	if m := st.next("unread", wait); !strings.Contains(m.data, `"inbox":1`) {
		t.Fatalf("first unread event %s", m.data)
	}
	f.app.waitStreams(f.session.ID, 1)
	id := f.app.agentNote(f.ag, elsewhere.ID, "two", "b")
	if m := st.next("unread", wait); !strings.Contains(m.data, fmt.Sprintf(`"inbox":2,"inbox_newest":%d`, id)) {
		t.Fatalf("after a note elsewhere: %s", m.data)
	}
}

// TestSearchPage: a word of a body finds its note, from: narrows, hits are
// marked after escaping, the body is shown rendered, and another
// workspace's notes are never found.
func TestSearchPage(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	hit := f.app.agentNote(f.ag, f.session.ID, "Rounding", "The orders_total <b>column</b> rounds wrong.\n\n**bold** "+xss)
	f.app.agentNote(f.ag, f.session.ID, "Other", "nothing to see")
	doc := f.alice.doc(f.alice.get("/search?q=orders_total"), http.StatusOK)
	html, _ := doc.Html()
	noRawXSS(t, html)
	if got := rowIDs(doc, "search-result"); len(got) != 1 || got[0] != hit {
		t.Fatalf("found %v, want [%d]", got, hit)
	}
	snippet := doc.Find(`[data-testid="search-snippet"]`)
	if snippet.Find("mark").Length() != 2 || snippet.Find("mark").First().Text() != "orders" || snippet.Find("b, img, script").Length() != 0 ||
		!strings.Contains(snippet.Text(), "column") {
		h, _ := snippet.Html()
		t.Fatalf("snippet %s", h)
	}
	if strings.Contains(snippet.Text(), "**") {
		t.Fatalf("the snippet shows Markdown syntax: %q", snippet.Text())
	}
	if v := doc.Find(`[data-testid="nav-search"]`).AttrOr("value", ""); v != "orders_total" {
		t.Fatalf("the navigation's box holds %q", v)
	}
	for q, want := range map[string]int{
		"from:claude-1 rounds":     1,
		"from:someone rounds":      0,
		"type:reply rounds":        0,
		"in:" + f.session.PublicID: 2,
	} {
		if got := len(rowIDs(f.alice.doc(f.alice.get("/search?q="+url.QueryEscape(q)), http.StatusOK), "search-result")); got != want {
			t.Errorf("%s: %d results, want %d", q, got, want)
		}
	}
	bob := f.app.owner("bob@example.com", "Bob's")
	if got := rowIDs(f.alice.doc(bob.get("/search?q=orders_total"), http.StatusOK), "search-result"); len(got) != 0 {
		t.Fatalf("bob finds %v", got)
	}
	if res := f.alice.get("/search?q=" + strings.Repeat("x", 501)); res.StatusCode != http.StatusOK {
		t.Fatalf("a long query: %d", res.StatusCode)
	}
}

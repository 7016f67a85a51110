package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
)

func TestEmailPoll(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	first := f.app.agentNote(f.ag, f.session.ID, "one", "1")
	f.alice.doc(f.alice.get(f.url), http.StatusOK) // page load: the mail cache follows the session

	// Unchanged: 204 and not a single query (median of a few, for the report).
	poll := fmt.Sprintf("%s/mail/poll?after=%d", f.url, first)
	var took []time.Duration
	for range 5 {
		before := f.app.requestStatements()
		start := time.Now()
		res := f.alice.htmx(poll)
		took = append(took, time.Since(start))
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("unchanged poll: %d, want 204", res.StatusCode)
		}
		if n := f.app.requestStatements() - before; n != 0 {
			t.Fatalf("unchanged poll ran %d queries, want 0", n)
		}
	}
	t.Logf("unchanged poll: 0 queries; client round trips %v", took)

	// Server time of an unchanged poll: the router alone, in process.
	h := f.app.h.Handler()
	req := httptest.NewRequest(http.MethodGet, f.app.srv.URL+poll, nil)
	req.Header.Set("HX-Request", "true")
	site, _ := url.Parse(f.app.srv.URL)
	for _, ck := range f.alice.http.Jar.Cookies(site) {
		req.AddCookie(ck)
	}
	const rounds = 200
	counted := f.app.requestStatements()
	start := time.Now()
	for range rounds {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent {
			t.Fatalf("in-process poll: %d", rec.Code)
		}
	}
	t.Logf("unchanged poll, server side: %v mean over %d, %d queries in all", time.Since(start)/rounds, rounds, f.app.requestStatements()-counted)

	// New notes: only the newer rows, newest first; then 204 again.
	second := f.app.agentNote(f.ag, f.session.ID, "two", "2")
	third := f.app.agentNote(f.ag, f.session.ID, "three", "3")
	var doc *goquery.Document
	for i := 0; ; i++ { // the notification reaches the mail cache asynchronously
		res := f.alice.htmx(poll)
		if res.StatusCode == http.StatusOK {
			doc = f.alice.doc(res, http.StatusOK)
			break
		}
		if i == 200 {
			t.Fatal("the mail cache never heard of the new notes")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got := noteIDs(doc); len(got) != 2 || got[0] != third || got[1] != second {
		t.Fatalf("poll rows %v, want [%d %d]", got, third, second)
	}
	if doc.Find(`main, header`).Length() != 0 {
		t.Fatal("poll answered with a whole page, want the rows alone")
	}
	if doc.Find(`[data-testid="note-unread"]`).Length() != 2 {
		t.Fatal("polled rows are new to the owner")
	}
	before := f.app.requestStatements()
	if res := f.alice.htmx(fmt.Sprintf("%s/mail/poll?after=%d", f.url, third)); res.StatusCode != http.StatusNoContent {
		t.Fatalf("caught-up poll: %d", res.StatusCode)
	}
	if n := f.app.requestStatements() - before; n != 0 {
		t.Fatalf("caught-up poll ran %d queries", n)
	}
	// An analysis note (no resource event) still wakes the poll.
	res := f.alice.postHTMX(f.url+"/mail", url.Values{"type": {"analysis"}, "body": {"thinking"}, "after": {fmt.Sprint(third)}})
	f.alice.doc(res, http.StatusOK)
	// The read mark moved: the project list shows nothing unread.
	pdoc := f.alice.doc(f.alice.get(fmt.Sprintf("/projects/%d", f.p.ID)), http.StatusOK)
	if pdoc.Find(`[data-testid="session-unread"]:not([hidden])`).Length() != 0 {
		t.Fatal("polled notes still count as unread")
	}
}

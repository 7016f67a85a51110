package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"testing"
)

// TestUnreadStream: the lists' stream sends the owner's counts on connect,
// when an agent posts, and when the owner reads the session (here through
// the page's read mark).
func TestUnreadStream(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	first := f.app.agentNote(f.ag, f.session.ID, "one", "b")
	st := f.alice.openEvents("/unread/stream")
	// Agents' notes to the whole session are in the inbox too.
	want := func(total int, newest int64) {
		t.Helper()
		m := st.next("unread", wait)
		w := fmt.Sprintf(`{"total":%d,"projects":{"%d":%d},"sessions":{"%d":%d},"inbox":%d,"inbox_newest":%d}`,
			total, f.p.ID, total, f.session.ID, total, total, newest)
		if total == 0 {
			w = `{"total":0,"projects":{},"sessions":{},"inbox":0,"inbox_newest":0}`
		}
		if m.data != w {
			t.Fatalf("unread %s, want %s", m.data, w)
		}
	}
	want(1, first)
	f.app.waitStreams(0, 1)
	last := f.app.agentNote(f.ag, f.session.ID, "two", "b")
	want(2, last)
	// The page's read mark (clamped to the newest note).
	if res := f.alice.postHTMX(f.url+"/mail/read", url.Values{"upto": {fmt.Sprint(last + 1000)}}); res.StatusCode != http.StatusNoContent {
		t.Fatalf("read mark: %d", res.StatusCode)
	}
	want(0, 0)
	next := f.app.agentNote(f.ag, f.session.ID, "three", "b")
	want(1, next)
	if next <= last {
		t.Fatal("ids")
	}
	// The lists render the same counts, and the title carries them.
	doc := f.alice.doc(f.alice.get("/"), http.StatusOK)
	if got := doc.Find("title").Text(); got != "(1) Projects — osFoundry" {
		t.Errorf("title %q", got)
	}
	if got := doc.Find(fmt.Sprintf(`[data-unread="project:%d"]:not([hidden])`, f.p.ID)).Text(); got != "1 unread" {
		t.Errorf("project badge %q", got)
	}
}

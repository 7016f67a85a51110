package handlers

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/live"
	"github.com/osfoundry/osfoundry/store"
)

const wait = 5 * time.Second

// TestSessionStreamAuthorization: the stream is the page's: another
// workspace's owner gets the page's 404, a signed-out visitor is sent to
// sign in, and neither gets a stream.
func TestSessionStreamAuthorization(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	bob := f.app.owner("bob@example.com", "Bob's")
	if s, res := bob.tryEvents(f.url + "/stream"); s != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("another workspace's owner: status %d, %s; want 404, no stream", res.StatusCode, res.Header.Get("Content-Type"))
	}
	anon := f.app.client()
	s, res := anon.tryEvents(f.url + "/stream")
	if s != nil || res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/login?next="+url.QueryEscape(f.url+"/stream") {
		t.Fatalf("signed out: status %d to %q; want 303 to sign in", res.StatusCode, res.Header.Get("Location"))
	}
	if s, res := anon.tryEvents("/unread/stream"); s != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("signed out, unread stream: status %d; want 303 to sign in", res.StatusCode)
	}
	if s, res := f.alice.tryEvents("/sessions/999999/stream"); s != nil || res.StatusCode != http.StatusNotFound {
		t.Fatalf("no such session: status %d; want 404", res.StatusCode)
	}
	// The owner gets a stream nothing buffers.
	st := f.alice.openEvents(f.url + "/stream")
	for h, want := range map[string]string{"Cache-Control": "no-store", "X-Accel-Buffering": "no"} {
		if got := st.res.Header.Get(h); got != want {
			t.Errorf("%s: %q, want %q", h, got, want)
		}
	}
}

// TestSessionStreamDeliversNotes: a note posted over MCP arrives as a note
// event whose id is the note id and whose data is the row the page shows;
// an owner's own note comes without the "new" badge, to another owner with it.
func TestSessionStreamDeliversNotes(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	carol := f.app.owner("carol@example.com", "")
	alice := f.alice.openEvents(f.url + "/stream")
	other := carol.openEvents(f.url + "/stream")
	f.app.waitStreams(f.session.ID, 2)

	id := postOverMCP(t, f.app.srv.URL, f.ag, f.session, "Question "+xss, "v1 or v2?\n\nv2 has <b>errors</b>.", "live-1")
	for _, st := range []*eventStream{alice, other} {
		m := st.next("note", wait)
		if m.id != fmt.Sprint(id) {
			t.Fatalf("note event id %q, want %d", m.id, id)
		}
		noRawXSS(t, m.data)
		for _, want := range []string{fmt.Sprintf(`id="note-%d"`, id), `data-testid="note-unread"`, "outside assistant", "<p>v1 or v2?</p>\n<p>v2 has &lt;b&gt;errors&lt;/b&gt;.</p>"} {
			if !strings.Contains(m.data, want) {
				t.Errorf("row lacks %q:\n%s", want, m.data)
			}
		}
		if strings.Count(m.data, `data-testid="note"`) != 1 {
			t.Errorf("want one row:\n%s", m.data)
		}
	}

	// Alice's own note: not new to her, new to carol.
	res := f.alice.postHTMX(f.url+"/mail", url.Values{"type": {"note"}, "subject": {"Mine"}, "body": {"From alice"}, "after": {fmt.Sprint(id)}})
	f.alice.doc(res, http.StatusOK)
	mine, theirs := alice.next("note", wait), other.next("note", wait)
	if mine.id != theirs.id || strings.Contains(mine.data, "note-unread") || !strings.Contains(theirs.data, "note-unread") {
		t.Fatalf("own note: alice's row new=%v, carol's new=%v (ids %s %s)", strings.Contains(mine.data, "note-unread"),
			strings.Contains(theirs.data, "note-unread"), mine.id, theirs.id)
	}
}

// TestSessionStreamReplay: a reconnect replays what it missed after the
// newer of Last-Event-ID and ?after=, oldest first, each note once; more
// than 100 missed notes give one reload event instead, then live notes.
func TestSessionStreamReplay(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	var ids []int64
	for i := range 4 {
		ids = append(ids, f.app.agentNote(f.ag, f.session.ID, fmt.Sprint("n", i), "b"))
	}
	// Cursors index ids (-1: none); the replay is every note after the newer.
	for _, c := range []struct {
		name          string
		query, header int
	}{
		{"header", -1, 1},
		{"query", 0, -1},
		{"the newer of both", 0, 2},
		{"from the start", -2, -1},
	} {
		path, after := "/stream", int64(0)
		var header []string
		if c.query >= 0 {
			after = ids[c.query]
			path += fmt.Sprintf("?after=%d", after)
		} else if c.query == -2 {
			path += "?after=0"
		}
		if c.header >= 0 {
			after = max(after, ids[c.header])
			header = []string{"Last-Event-ID", fmt.Sprint(ids[c.header])}
		}
		var want []string
		for _, id := range ids {
			if id > after {
				want = append(want, fmt.Sprint(id))
			}
		}
		st := f.alice.openEvents(f.url+path, header...)
		if got := st.notes(len(want), wait); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: replayed %v, want %v", c.name, got, want)
		}
		// Then live, nothing twice.
		id := f.app.agentNote(f.ag, f.session.ID, "live "+c.name, "b")
		if m := st.next("note", wait); m.id != fmt.Sprint(id) {
			t.Errorf("%s: after the replay got note %s, want %d", c.name, m.id, id)
		}
		ids = append(ids, id)
		st.close()
	}
	// No cursor: from now on, nothing replayed.
	st := f.alice.openEvents(f.url + "/stream")
	st.quiet(300 * time.Millisecond)
	st.close()

	// 101 missed: one reload event, at the newest id, then live.
	last := ids[len(ids)-1]
	for i := range live.MaxReplay + 1 {
		last = f.app.agentNote(f.ag, f.session.ID, fmt.Sprint("bulk ", i), "b")
	}
	st = f.alice.openEvents(f.url+"/stream", "Last-Event-ID", fmt.Sprint(ids[len(ids)-1]))
	first := st.nextData(wait)
	if first.name != "reload" || first.id != fmt.Sprint(last) || first.data != mailReloadURL(f.session.ID) {
		t.Fatalf("first event %+v, want reload at %d with the list's URL", first, last)
	}
	live := f.app.agentNote(f.ag, f.session.ID, "after reload", "b")
	if m := st.next("note", wait); m.id != fmt.Sprint(live) {
		t.Fatalf("after the reload event got note %s, want %d", m.id, live)
	}
	// The reload URL gives the newest page of rows.
	doc := f.alice.doc(f.alice.htmx(mailReloadURL(f.session.ID)), http.StatusOK)
	if got := noteIDs(doc); len(got) != store.MailPageSize || got[0] != live {
		t.Fatalf("reload page: %d rows from %v, want %d from %d", len(got), got[:1], store.MailPageSize, live)
	}
}

// TestStreamsAcrossReplicas: a note posted through replica A reaches a
// stream on replica B (each with its own listener, one database), and signing
// out on A ends the streams on B.
func TestStreamsAcrossReplicas(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	b, bsrv := f.app.replica()
	onB, _ := f.alice.tryEventsAt(bsrv.URL, f.url+"/stream")
	if onB == nil {
		t.Fatal("no stream on B")
	}
	unreadOnB, _ := f.alice.tryEventsAt(bsrv.URL, "/unread/stream")
	if unreadOnB == nil {
		t.Fatal("no unread stream on B")
	}
	unreadOnB.next("unread", wait)
	for range 500 {
		if b.live.Open() == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	id := postOverMCP(t, f.app.srv.URL, f.ag, f.session, "Across", "Posted through A", "across-1")
	if m := onB.next("note", wait); m.id != fmt.Sprint(id) || !strings.Contains(m.data, "Posted through A") {
		t.Fatalf("B's stream got %+v, want note %d", m, id)
	}
	if m := unreadOnB.next("unread", wait); !strings.Contains(m.data, `"total":1`) {
		t.Fatalf("B's unread stream: %s, want a total of 1", m.data)
	}

	res := f.alice.post("/logout", nil)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign out on A: %d", res.StatusCode)
	}
	for _, st := range []*eventStream{onB, unreadOnB} {
		got := st.ends(wait)
		if len(got) == 0 || got[len(got)-1].name != "signout" {
			t.Fatalf("B's stream ended with %+v, want a signout event", got)
		}
	}
}

// TestStreamsEndAtShutdown: closing the streams at shutdown ends every
// open stream at once, so http.Server.Shutdown returns promptly instead of
// waiting out its drain; new streams are refused.
func TestStreamsEndAtShutdown(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	var streams []*eventStream
	for range 3 {
		streams = append(streams, f.alice.openEvents(f.url+"/stream"), f.alice.openEvents("/unread/stream"))
	}
	f.app.waitStreams(f.session.ID, 3)
	start := time.Now()
	f.app.h.CloseStreams()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := f.app.srv.Config.Shutdown(ctx); err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	took := time.Since(start)
	for _, st := range streams {
		st.ends(time.Second)
	}
	t.Logf("shutdown with 6 open streams took %v", took)
	if took > 2*time.Second {
		t.Fatalf("shutdown took %v with open streams, want well under the 10 s drain", took)
	}
	// The handler refuses new streams (the listener is gone: ask it directly).
	if err := f.app.h.live.Subscribe(f.app.h.live.NewStream(f.alice.owner, f.session.ID, live.Client{SignIn: 1}, ""), f.p.ID, 0); err != live.ErrDown {
		t.Fatalf("subscribe after close: %v, want live.ErrDown", err)
	}
}

// TestSignOutEndsStreams: signing out ends that sign-in's streams with a
// signout event; another sign-in of the same owner keeps its own.
func TestSignOutEndsStreams(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	// A second browser of alice's.
	other := &ownerClient{client: f.app.client(), owner: f.alice.owner}
	other.refreshCSRF("/login")
	if res := other.post("/login", url.Values{"email": {"alice@example.com"}, "password": {testPassword}}); res.StatusCode != http.StatusSeeOther {
		t.Fatal("second sign-in")
	}
	mine := f.alice.openEvents(f.url + "/stream")
	theirs := other.openEvents(f.url + "/stream")
	f.app.waitStreams(f.session.ID, 2)
	f.alice.post("/logout", nil)
	if got := mine.ends(wait); len(got) == 0 || got[len(got)-1].name != "signout" {
		t.Fatalf("signed-out stream ended with %+v", got)
	}
	f.app.waitStreams(f.session.ID, 1)
	id := f.app.agentNote(f.ag, f.session.ID, "still here", "b")
	if m := theirs.next("note", wait); m.id != fmt.Sprint(id) {
		t.Fatalf("the other sign-in's stream: %s, want %d", m.id, id)
	}
	// And reconnecting signed out is sent to sign in, as the page.
	if s, res := f.alice.tryEvents(f.url + "/stream"); s != nil || res.StatusCode != http.StatusSeeOther {
		t.Fatalf("stream after sign-out: %d", res.StatusCode)
	}
}

// TestPresenceEvents: set_status sends the sidebar at once; a page that
// already shows the current version gets nothing on connect.
func TestPresenceEvents(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	connect, _ := doc.Find(`[sse-connect]`).Attr("sse-connect")
	if !strings.HasPrefix(connect, f.url+"/stream?after=0&v=") {
		t.Fatalf("sse-connect %q", connect)
	}
	st := f.alice.openEvents(connect)
	// The first look at the sidebar finds the version the page has: quiet.
	deadline := time.After(500 * time.Millisecond)
	for done := false; !done; {
		select {
		case m := <-st.msgs:
			if m.name == "presence" {
				t.Fatalf("presence sent though the page has the current version")
			}
		case <-deadline:
			done = true
		}
	}
	f.app.setStatus(f.ag, new("acme/site"), new("main"), new("Live status "+xss))
	m := st.next("presence", wait)
	noRawXSS(t, m.data)
	if !strings.Contains(m.data, `id="presence"`) || !strings.Contains(m.data, "Live status") ||
		doc.Find(`[sse-swap="presence"][hx-target="#presence"]`).Length() != 1 {
		t.Fatalf("presence event:\n%s", m.data)
	}
	// A revocation clears it.
	if err := f.app.store.RevokeConnection(context.Background(), f.ag.workspaceID, f.ag.connID); err != nil {
		t.Fatal(err)
	}
	if m := st.next("presence", wait); strings.Contains(m.data, "Live status") {
		t.Fatal("the revoked agent's status is still shown")
	}
}

// TestListenerDownClosesStreams: when the replica's listening connection dies,
// its streams are closed (notifications are being lost) and new ones are
// refused until it listens again; a reconnect then replays what was missed.
func TestListenerDownClosesStreams(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	st := f.alice.openEvents(f.url + "/stream")
	first := f.app.agentNote(f.ag, f.session.ID, "before", "b")
	st.next("note", wait)
	f.app.sql().Exec(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()`, store.ListenerApplicationName)
	st.ends(wait)
	missed := f.app.agentNote(f.ag, f.session.ID, "while down", "b")
	var again *eventStream
	for range 500 {
		var res *http.Response
		if again, res = f.alice.tryEvents(f.url+"/stream", "Last-Event-ID", fmt.Sprint(first)); again != nil {
			break
		}
		if res.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("while the listener is down: %d, want 503", res.StatusCode)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if again == nil {
		t.Fatal("the listener never came back")
	}
	if m := again.next("note", wait); m.id != fmt.Sprint(missed) {
		t.Fatalf("replayed %s, want %d", m.id, missed)
	}
}

// TestStreamOutlivesServerTimeouts: a stream stays open (and live) past the
// server's ReadTimeout and WriteTimeout.
func TestStreamOutlivesServerTimeouts(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	srv := &http.Server{Handler: f.app.h.Handler(), ReadTimeout: 500 * time.Millisecond, WriteTimeout: 500 * time.Millisecond}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ln)
	t.Cleanup(func() { f.app.h.CloseStreams(); srv.Close() })
	st, _ := f.alice.tryEventsAt("http://"+ln.Addr().String(), f.url+"/stream")
	if st == nil {
		t.Fatal("no stream")
	}
	time.Sleep(1500 * time.Millisecond) // three times both timeouts
	id := f.app.agentNote(f.ag, f.session.ID, "late", "b")
	if m := st.next("note", wait); m.id != fmt.Sprint(id) {
		t.Fatalf("got %s, want %d", m.id, id)
	}
}

// TestReceiptEvent: an agent reading an owner's note sends the note's
// receipts line, out of band, to the session's streams.
func TestReceiptEvent(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	res := f.alice.postHTMX(f.url+"/mail", url.Values{"type": {"note"}, "subject": {"To all"}, "body": {"Please read"}})
	doc := f.alice.doc(res, http.StatusOK)
	note := noteIDs(doc)[0]
	if doc.Find(fmt.Sprintf(`#receipts-%d[data-testid="note-receipts"]`, note)).Length() != 1 {
		t.Fatal("an owner's note has no receipts line to replace")
	}
	st := f.alice.openEvents(f.url + "/stream")
	f.app.waitStreams(f.session.ID, 1)
	f.app.readMail(f.ag, f.session)
	m := st.next("receipt", wait)
	if m.id != "" || !strings.Contains(m.data, fmt.Sprintf(`id="receipts-%d"`, note)) || !strings.Contains(m.data, `hx-swap-oob="outerHTML"`) ||
		!strings.Contains(m.data, "read by") || !strings.Contains(m.data, `data-testid="note-receipt-reader"`) {
		t.Fatalf("receipt event %+v", m)
	}
	noRawXSS(t, m.data)
}

// TestSignedOutPollReturnsToThePage: a poll signed out (the stream closed on
// sign-out, the fallback poll runs) sends the page to sign in and back to
// the page, not to the poll's fragment.
func TestSignedOutPollReturnsToThePage(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	anon := f.app.client()
	req, _ := http.NewRequest(http.MethodGet, f.app.srv.URL+f.url+"/mail/poll?after=3", nil)
	req.Header.Set("HX-Request", "true")
	req.Header.Set("HX-Current-URL", f.app.srv.URL+f.url+"?x=1")
	res, _ := anon.do(req)
	if got, want := res.Header.Get("HX-Redirect"), "/login?next="+url.QueryEscape(f.url+"?x=1"); got != want {
		t.Fatalf("HX-Redirect %q, want %q", got, want)
	}
	// Another site's URL is not followed.
	req.Header.Set("HX-Current-URL", "https://evil.example"+f.url)
	res, _ = anon.do(req)
	if got, want := res.Header.Get("HX-Redirect"), "/login?next="+url.QueryEscape(f.url+"/mail/poll?after=3"); got != want {
		t.Fatalf("HX-Redirect %q, want %q", got, want)
	}
}

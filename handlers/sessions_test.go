package handlers

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
)

// sessionFixture is a signed-in owner with a project, a session and an
// agent seated and invited there.
type sessionFixture struct {
	app   *testApp
	alice *ownerClient
	p     *store.Project
	x     *store.Session
	ag    agent
	url   string
}

func newSessionFixture(t *testing.T) *sessionFixture {
	app := newTestApp(t)
	alice := app.owner("alice@example.com", "")
	p := alice.project("Site")
	x := alice.session(p, "Release week")
	ag := app.agent("alice@example.com", "Site", "claude-1", "Claude "+xss)
	if err := app.store.Invite(t.Context(), alice.owner.WorkspaceID, x.ID, ag.connID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	return &sessionFixture{app: app, alice: alice, p: p, x: x, ag: ag, url: fmt.Sprintf("/sessions/%d", x.ID)}
}

func noteIDs(doc *goquery.Document) []int64 {
	var ids []int64
	doc.Find(`[data-testid="note"]`).Each(func(_ int, s *goquery.Selection) {
		id, _ := strconv.ParseInt(s.AttrOr("data-note-id", ""), 10, 64)
		ids = append(ids, id)
	})
	return ids
}

func TestSessionPageShowsMailAndPresence(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	f.app.setStatus(f.ag, ptr("github.com/acme/"+xss), ptr("feat/"+xss), ptr("Fixing "+xss))
	long := strings.Repeat("line of a long body\n", 40) + xss
	first := f.app.agentNote(f.ag, f.x.ID, "Started "+xss, "Body "+xss+"\nsecond line")
	second := f.app.agentNote(f.ag, f.x.ID, "Long one", long)

	res := f.alice.get(f.url)
	doc := f.alice.doc(res, http.StatusOK)
	html, _ := doc.Html()
	noRawXSS(t, html)

	if got := noteIDs(doc); len(got) != 2 || got[0] != second || got[1] != first {
		t.Fatalf("notes %v, want newest first [%d %d]", got, second, first)
	}
	row := doc.Find(fmt.Sprintf(`#note-%d`, first))
	checks := map[string]string{
		"note-sender-name": "Claude " + xss,
		"note-sender-slug": "ext-claude-1",
		"note-outside":     "outside assistant",
		"note-recipient":   "whole session",
		"note-type":        "note",
		"note-subject":     "Started " + xss,
		"note-body":        "Body " + xss + "\nsecond line",
	}
	for id, want := range checks {
		if got := row.Find(`[data-testid="` + id + `"]`).Text(); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if _, ok := row.Find(`[data-testid="note-time"]`).Attr("title"); !ok {
		t.Error("no exact time on hover")
	}
	if row.Find(`[data-testid="note-unread"]`).Length() != 1 {
		t.Error("a new note is not marked unread")
	}
	// A long body is collapsed behind "show more", whole inside.
	body := doc.Find(fmt.Sprintf(`#note-%d [data-testid="note-body"]`, second))
	if goquery.NodeName(body) != "details" || body.Find(".full").Text() != long {
		t.Error("long body not collapsed with the full text inside")
	}
	// The poller starts from the newest note.
	if v, _ := doc.Find(`#mail-poller`).Attr("hx-get"); v != fmt.Sprintf("%s/mail/poll?after=%d", f.url, second) {
		t.Errorf("poller %s, want after=%d", v, second)
	}

	// Presence sidebar: the seated agent, its tier in words, its status
	// under "self-reported".
	side := doc.Find(`[data-testid="presence-agent"]`)
	if side.Length() != 1 {
		t.Fatalf("%d agents in the sidebar", side.Length())
	}
	for id, want := range map[string]string{
		"presence-name":   "Claude " + xss,
		"presence-handle": "@claude-1",
		"presence-tier":   "active",
		"status-task":     "Fixing " + xss,
		"status-branch":   "feat/" + xss,
		"status-repo":     "github.com/acme/" + xss,
	} {
		if got := side.Find(`[data-testid="` + id + `"]`).Text(); got != want {
			t.Errorf("%s = %q, want %q", id, got, want)
		}
	}
	if !strings.Contains(side.Find(`[data-testid="presence-status"]`).Text(), "self-reported") {
		t.Error(`status not labelled "self-reported"`)
	}

	// Seen now: a reload marks nothing unread.
	doc = f.alice.doc(f.alice.get(f.url), http.StatusOK)
	if n := doc.Find(`[data-testid="note-unread"]`).Length(); n != 0 {
		t.Errorf("%d notes still unread after viewing", n)
	}
}

func TestStaleStatusIsDimmedNotHidden(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	f.app.setStatus(f.ag, nil, nil, ptr("old task"))
	f.app.exec(`UPDATE statuses SET updated_at = now() - interval '3 days'`)
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	st := doc.Find(`[data-testid="presence-status"]`)
	if !st.HasClass("stale") || st.Find(`[data-testid="status-task"]`).Text() != "old task" {
		t.Fatal("a day-old status must be dimmed and still shown")
	}
	// A cleared status says so.
	f.app.setStatus(f.ag, nil, nil, nil)
	doc = f.alice.doc(f.alice.get(f.url), http.StatusOK)
	if doc.Find(`[data-testid="status-cleared"]`).Length() != 1 {
		t.Fatal("cleared status not shown as cleared")
	}
}

func TestSessionOtherWorkspaceIs404(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	note := f.app.agentNote(f.ag, f.x.ID, "s", "b")
	bob := f.app.owner("bob@example.com", "Bob's")
	// Bob's own session is fine; Alice's is not found, on every route.
	f.alice.get(f.url) // the hub tracks the session now
	for _, path := range []string{
		f.url, f.url + "/mail/poll?after=0", fmt.Sprintf("%s/mail/poll?after=%d", f.url, note), f.url + "/mail/older?before=999",
		f.url + "/presence?v=x", fmt.Sprintf("%s/compose?reply_to=%d", f.url, note), f.url + "/participants",
	} {
		for _, get := range []func(string) *http.Response{bob.get, bob.htmx} {
			if res := get(path); res.StatusCode != http.StatusNotFound {
				t.Errorf("GET %s: %d, want 404", path, res.StatusCode)
			}
		}
	}
	for _, path := range []string{f.url + "/notes", f.url + "/invitations", f.url + fmt.Sprintf("/invitations/%d", f.ag.connID),
		f.url + fmt.Sprintf("/invitations/%d/remove", f.ag.connID)} {
		res := bob.post(path, url.Values{"type": {"note"}, "body": {"b"}, "connection_id": {fmt.Sprint(f.ag.connID)}, "role": {"runner"}})
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, res.StatusCode)
		}
	}
	// Bob may not reply to Alice's note from a session of his own either.
	bp := bob.project("Mine")
	bx := bob.session(bp, "Mine")
	res := bob.postHTMX(fmt.Sprintf("/sessions/%d/notes", bx.ID), url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(note)}, "body": {"x"}})
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("reply across workspaces: %d, want 404", res.StatusCode)
	}
	role, err := f.app.store.InvitationRole(t.Context(), f.alice.owner.WorkspaceID, f.x.ID, f.ag.connID)
	if err != nil || role != store.RoleContributor {
		t.Fatalf("role changed across workspaces: %q %v", role, err)
	}
}

func TestMailPoll(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	first := f.app.agentNote(f.ag, f.x.ID, "one", "1")
	f.alice.doc(f.alice.get(f.url), http.StatusOK) // page load: the hub tracks the session

	// Unchanged: 204 and not a single query (median of a few, for the report).
	poll := fmt.Sprintf("%s/mail/poll?after=%d", f.url, first)
	var took []time.Duration
	for range 5 {
		before := f.app.queries.n.Load()
		start := time.Now()
		res := f.alice.htmx(poll)
		took = append(took, time.Since(start))
		if res.StatusCode != http.StatusNoContent {
			t.Fatalf("unchanged poll: %d, want 204", res.StatusCode)
		}
		if n := f.app.queries.n.Load() - before; n != 0 {
			t.Fatalf("unchanged poll ran %d queries, want 0", n)
		}
	}
	t.Logf("unchanged poll: 0 queries; client round trips %v", took)

	// Server time of an unchanged poll: the router alone, in process.
	h := f.app.h.Handler()
	req := httptest.NewRequest(http.MethodGet, poll, nil)
	req.Header.Set("HX-Request", "true")
	site, _ := url.Parse(f.app.srv.URL)
	for _, ck := range f.alice.http.Jar.Cookies(site) {
		req.AddCookie(ck)
	}
	const rounds = 200
	counted := f.app.queries.n.Load()
	start := time.Now()
	for range rounds {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusNoContent {
			t.Fatalf("in-process poll: %d", rec.Code)
		}
	}
	t.Logf("unchanged poll, server side: %v mean over %d, %d queries in all", time.Since(start)/rounds, rounds, f.app.queries.n.Load()-counted)

	// New notes: only the newer rows, newest first; then 204 again.
	second := f.app.agentNote(f.ag, f.x.ID, "two", "2")
	third := f.app.agentNote(f.ag, f.x.ID, "three", "3")
	var doc *goquery.Document
	for i := 0; ; i++ { // the notification reaches the hub asynchronously
		res := f.alice.htmx(poll)
		if res.StatusCode == http.StatusOK {
			doc = f.alice.doc(res, http.StatusOK)
			break
		}
		if i == 200 {
			t.Fatal("the hub never heard of the new notes")
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
	before := f.app.queries.n.Load()
	if res := f.alice.htmx(fmt.Sprintf("%s/mail/poll?after=%d", f.url, third)); res.StatusCode != http.StatusNoContent {
		t.Fatalf("caught-up poll: %d", res.StatusCode)
	}
	if n := f.app.queries.n.Load() - before; n != 0 {
		t.Fatalf("caught-up poll ran %d queries", n)
	}
	// An analysis note (no resource event) still wakes the poll.
	res := f.alice.postHTMX(f.url+"/notes", url.Values{"type": {"analysis"}, "body": {"thinking"}, "after": {fmt.Sprint(third)}})
	f.alice.doc(res, http.StatusOK)
	// The read mark moved: the project list shows nothing unread.
	pdoc := f.alice.doc(f.alice.get(fmt.Sprintf("/projects/%d", f.p.ID)), http.StatusOK)
	if pdoc.Find(`[data-testid="session-unread"]`).Length() != 0 {
		t.Fatal("polled notes still count as unread")
	}
}

func TestPresencePoll(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	src, _ := doc.Find(`#presence`).Attr("hx-get")
	if res := f.alice.htmx(src); res.StatusCode != http.StatusNoContent {
		t.Fatalf("unchanged sidebar: %d, want 204", res.StatusCode)
	}
	f.app.setStatus(f.ag, ptr("repo"), ptr("main"), ptr("new task "+xss))
	res := f.alice.htmx(src)
	side := f.alice.doc(res, http.StatusOK)
	if got := side.Find(`[data-testid="status-task"]`).Text(); got != "new task "+xss {
		t.Fatalf("task %q", got)
	}
	html, _ := side.Html()
	noRawXSS(t, html)
	next, _ := side.Find(`#presence`).Attr("hx-get")
	if next == src {
		t.Fatal("the new sidebar must carry a new version")
	}
	if res := f.alice.htmx(next); res.StatusCode != http.StatusNoContent {
		t.Fatalf("sidebar unchanged since: %d", res.StatusCode)
	}
	// Presence tiers change what it shows.
	f.app.exec(`UPDATE connections SET last_seen_at = now() - interval '1 hour' WHERE id = $1`, f.ag.connID)
	side = f.alice.doc(f.alice.htmx(next), http.StatusOK)
	if got := side.Find(`[data-testid="presence-tier"]`).Text(); got != "away" {
		t.Fatalf("tier %q, want away", got)
	}
}

func TestReply(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	note := f.app.agentNote(f.ag, f.x.ID, "Question "+xss, "Which branch?")
	f.alice.get(f.url)

	// The inline composer: addressed to the sender slug, subject prefilled.
	comp := f.alice.doc(f.alice.htmx(fmt.Sprintf("%s/compose?reply_to=%d", f.url, note)), http.StatusOK)
	if got := comp.Find(`[data-testid="composer-to"]`).Text(); got != f.ag.slug {
		t.Fatalf("composer to %q", got)
	}
	if comp.Find(`input[name=recipient], input[name=to]`).Length() != 0 {
		t.Fatal("the recipient must not be editable")
	}
	if v, _ := comp.Find(`[data-testid="composer-subject"]`).Attr("value"); v != "Re: Question "+xss {
		t.Fatalf("subject %q", v)
	}
	html, _ := comp.Html()
	noRawXSS(t, html)
	// Without htmx the composer is a page of its own.
	f.alice.doc(f.alice.get(fmt.Sprintf("%s/compose?reply_to=%d", f.url, note)), http.StatusOK)

	// Errors come back next to the field, in the composer's place.
	form := url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(note)}, "subject": {strings.Repeat("s", 201)}, "body": {"x"}, "after": {fmt.Sprint(note)}}
	res := f.alice.postHTMX(f.url+"/notes", form)
	if got := res.Header.Get("HX-Retarget"); got != fmt.Sprintf("#composer-reply-%d", note) {
		t.Fatalf("retarget %q", got)
	}
	errDoc := f.alice.doc(res, http.StatusUnprocessableEntity)
	if errDoc.Find(`[data-testid="error-subject"]`).Length() != 1 {
		t.Fatal("no subject error")
	}
	form.Set("subject", "ok")
	form.Set("body", strings.Repeat("b", 10001))
	errDoc = f.alice.doc(f.alice.postHTMX(f.url+"/notes", form), http.StatusUnprocessableEntity)
	if errDoc.Find(`[data-testid="error-body"]`).Length() != 1 {
		t.Fatal("no body error")
	}
	// Replying to an owner's note, or to nothing, is not possible.
	form.Set("body", "x")
	form.Set("reply_to", "999999")
	if res := f.alice.postHTMX(f.url+"/notes", form); res.StatusCode != http.StatusNotFound {
		t.Fatalf("reply to a missing note: %d", res.StatusCode)
	}

	// Send: the response carries the new row (and only rows after "after").
	form = url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(note)}, "subject": {"Re: Question"}, "body": {"Use main.\n" + xss}, "after": {fmt.Sprint(note)}}
	doc := f.alice.doc(f.alice.postHTMX(f.url+"/notes", form), http.StatusOK)
	rows := doc.Find(`[data-testid="note"]`)
	if rows.Length() != 1 {
		t.Fatalf("%d rows in the response, want 1", rows.Length())
	}
	if got := rows.Find(`[data-testid="note-recipient"]`).Text(); got != f.ag.slug {
		t.Fatalf("recipient %q", got)
	}
	if got := rows.Find(`[data-testid="note-type"]`).Text(); got != "reply" {
		t.Fatalf("type %q", got)
	}
	if rows.Find(`[data-testid="note-outside"]`).Length() != 0 || rows.Find(`[data-testid="reply-button"]`).Length() != 0 {
		t.Fatal("an owner's note is not from an outside assistant and has no Reply")
	}
	if v, _ := doc.Find(fmt.Sprintf(`#reply-slot-%d`, note)).Attr("hx-swap-oob"); v == "" {
		t.Fatal("the inline composer is not closed")
	}
	html, _ = doc.Html()
	noRawXSS(t, html)

	// A double submit posts once.
	f.alice.doc(f.alice.postHTMX(f.url+"/notes", form), http.StatusOK)
	notes, err := f.app.store.ListSessionMail(t.Context(), f.alice.owner.WorkspaceID, f.x.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 {
		t.Fatalf("%d notes after a double submit, want 2", len(notes))
	}
	reply := notes[0]
	if reply.MessageType != store.MessageReply || reply.RecipientSlug == nil || *reply.RecipientSlug != f.ag.slug ||
		reply.SenderKind != "owner" || reply.Body != "Use main.\n"+xss {
		t.Fatalf("stored reply %+v", reply)
	}

	// Whole-session and analysis notes; without htmx the post redirects.
	res = f.alice.post(f.url+"/notes", url.Values{"type": {"note"}, "subject": {"All"}, "body": {"to everyone"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("plain post: %d", res.StatusCode)
	}
	doc = f.alice.doc(f.alice.postHTMX(f.url+"/notes", url.Values{"type": {"analysis"}, "subject": {"Why"}, "body": {"private"}, "after": {"0"}}), http.StatusOK)
	if got := doc.Find(`[data-testid="note"]`).First().Find(`[data-testid="note-type"]`).Text(); got != "analysis · owners only" {
		t.Fatalf("analysis label %q", got)
	}
	page := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	if n := page.Find(`.note.is-analysis`).Length(); n != 1 {
		t.Fatalf("%d analysis rows", n)
	}
	if got := page.Find(`[data-testid="note"]`).Eq(1).Find(`[data-testid="note-recipient"]`).Text(); got != "whole session" {
		t.Fatalf("whole-session recipient %q", got)
	}
}

func TestParticipants(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	other := f.app.agent("alice@example.com", "", "other-bot", "Other "+xss)
	p := f.url + "/participants"
	doc := f.alice.doc(f.alice.get(p), http.StatusOK)
	if n := doc.Find(`[data-testid="participant"]`).Length(); n != 1 {
		t.Fatalf("%d participants", n)
	}
	html, _ := doc.Html()
	noRawXSS(t, html)
	doc = f.alice.doc(f.alice.post(f.url+"/invitations", url.Values{"connection_id": {"424242"}, "role": {"runner"}}), http.StatusUnprocessableEntity)
	if doc.Find(`[data-testid="error-connection_id"]`).Length() != 1 {
		t.Fatal("no error for an unknown connection")
	}
	if res := f.alice.post(f.url+"/invitations", url.Values{"connection_id": {fmt.Sprint(other.connID)}, "role": {"runner"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("invite %d", res.StatusCode)
	}
	if res := f.alice.post(fmt.Sprintf("%s/invitations/%d", f.url, other.connID), url.Values{"role": {"contributor"}}); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("change role %d", res.StatusCode)
	}
	role, _ := f.app.store.InvitationRole(t.Context(), f.alice.owner.WorkspaceID, f.x.ID, other.connID)
	if role != store.RoleContributor {
		t.Fatalf("role %q", role)
	}
	if res := f.alice.post(fmt.Sprintf("%s/invitations/%d/remove", f.url, other.connID), nil); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("remove %d", res.StatusCode)
	}
	if res := f.alice.post(fmt.Sprintf("%s/invitations/%d/remove", f.url, other.connID), nil); res.StatusCode != http.StatusNotFound {
		t.Fatalf("remove twice %d", res.StatusCode)
	}
}

func TestOlderNotes(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	var ids []int64
	for i := range store.MailPageSize + 2 {
		ids = append(ids, f.app.agentNote(f.ag, f.x.ID, fmt.Sprintf("n%d", i), "b"))
	}
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	shown := noteIDs(doc)
	if len(shown) != store.MailPageSize || shown[0] != ids[len(ids)-1] {
		t.Fatalf("first page: %d rows from %d", len(shown), shown[0])
	}
	older, _ := doc.Find(`[data-testid="mail-older"]`).Attr("hx-get")
	rows := f.alice.doc(f.alice.htmx(older), http.StatusOK)
	if got := noteIDs(rows); len(got) != 2 || got[0] != ids[1] || got[1] != ids[0] {
		t.Fatalf("older rows %v", got)
	}
	if rows.Find(`#mail-older [data-testid="mail-older"]`).Length() != 0 {
		t.Fatal("an older link after the oldest note")
	}
	// Without script the link is a page of its own, which does not poll.
	href, _ := doc.Find(`[data-testid="mail-older"]`).Attr("href")
	page := f.alice.doc(f.alice.get(href), http.StatusOK)
	if len(noteIDs(page)) != 2 || page.Find(`#mail-poller`).Length() != 0 || page.Find(`[data-testid="mail-paged"]`).Length() != 1 {
		t.Fatal("older page: wrong rows, or it polls")
	}
}

package handlers

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
)

// readMail reads the agent's mail of the session as read_session_mail does,
// which records the read receipts.
func (a *testApp) readMail(ag agent, session *store.Session) {
	a.t.Helper()
	if _, _, err := a.store.ReadAgentMail(context.Background(), ag.workspaceID, ag.connID, session.Type, session.PublicID, 0, store.MaxMailPage); err != nil {
		a.t.Fatal(err)
	}
}

// pollUntil polls until the answer brings read receipts (the mail cache hears of
// them asynchronously) and returns it.
func (f *sessionFixture) pollUntil(path string) *goquery.Document {
	f.app.t.Helper()
	for i := 0; ; i++ {
		res := f.alice.htmx(path)
		if res.StatusCode == http.StatusOK {
			if doc := f.alice.doc(res, http.StatusOK); doc.Find(`#receipts-cursor`).Length() == 1 {
				return doc
			}
		} else {
			res.Body.Close()
		}
		if i == 200 {
			f.app.t.Fatalf("%s: no receipts came", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readers is the names in a note's receipts line, in order.
func readers(s *goquery.Selection) []string {
	var out []string
	s.Find(`[data-testid="note-receipt-reader"]`).Each(func(_ int, r *goquery.Selection) { out = append(out, r.Text()) })
	return out
}

// TestReadReceiptsInTeamMail: "read by <agent> · <time>" under each owner's
// note, on page load and through the poll, which sends the changed lines out
// of band and is a query-free 204 again once the page has them; receipts
// outlive the connection's revocation.
func TestReadReceiptsInTeamMail(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	ctx := context.Background()
	ws := f.alice.owner.WorkspaceID
	codex := f.invitedAgent("codex-2", "Codex Two")
	question := f.app.agentNote(f.ag, f.session.ID, "Question", "Which branch?")
	post := func(form url.Values) int64 {
		f.alice.doc(f.alice.postHTMX(f.url+"/mail", form), http.StatusOK)
		notes, err := f.app.store.ListSessionMail(ctx, ws, f.session.ID, 0, 1)
		if err != nil {
			t.Fatal(err)
		}
		return notes[0].ID
	}
	f.alice.get(f.url)
	toAll := post(url.Values{"type": {"note"}, "subject": {"Plan"}, "body": {"Ship Friday."}})
	reply := post(url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(question)}, "subject": {"Re: Question"}, "body": {"main"}})

	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	for _, id := range []int64{toAll, reply} {
		if line := doc.Find(fmt.Sprintf(`#receipts-%d[data-testid="note-receipts"]`, id)); line.Length() != 1 || strings.TrimSpace(line.Text()) != "" {
			t.Fatalf("note %d: receipts line %d, %q before anyone read it", id, line.Length(), line.Text())
		}
	}
	if doc.Find(fmt.Sprintf(`#note-%d [data-testid="note-receipts"]`, question)).Length() != 0 {
		t.Fatal("an agent's note has no receipts line")
	}
	if v, _ := doc.Find(`#receipts-cursor`).Attr("data-receipts-after"); v != "0" {
		t.Fatalf("cursor %q", v)
	}

	// Claude reads: both owner's notes get its receipt; the poll brings the
	// two lines out of band and the new cursor, and no rows.
	f.app.readMail(f.ag, f.session)
	poll := fmt.Sprintf("%s/mail/poll?after=%d&receipts=", f.url, reply)
	doc = f.pollUntil(poll + "0")
	if len(noteIDs(doc)) != 0 {
		t.Fatalf("rows %v, want none", noteIDs(doc))
	}
	for _, id := range []int64{toAll, reply} {
		line := doc.Find(fmt.Sprintf(`#receipts-%d`, id))
		if oob, _ := line.Attr("hx-swap-oob"); oob != "outerHTML" || strings.Join(readers(line), ",") != f.ag.name {
			t.Fatalf("note %d: line %q (oob %q)", id, line.Text(), oob)
		}
		if text := strings.Join(strings.Fields(line.Text()), " "); text != "read by "+f.ag.name+" · just now" {
			t.Fatalf("note %d: %q", id, text)
		}
	}
	html, _ := doc.Html()
	noRawXSS(t, html)
	cursor, _ := doc.Find(`#receipts-cursor[hx-swap-oob]`).Attr("data-receipts-after")
	if n, _ := strconv.ParseInt(cursor, 10, 64); n <= 0 {
		t.Fatalf("cursor %q", cursor)
	}
	// With that cursor: 204, no query.
	before := f.app.requestStatements()
	if res := f.alice.htmx(poll + cursor); res.StatusCode != http.StatusNoContent {
		t.Fatalf("caught-up poll: %d", res.StatusCode)
	}
	if n := f.app.requestStatements() - before; n != 0 {
		t.Fatalf("caught-up poll ran %d queries", n)
	}

	// Codex reads: only the note it can read changes, with both readers.
	f.app.readMail(codex, f.session)
	doc = f.pollUntil(poll + cursor)
	if doc.Find(fmt.Sprintf(`#receipts-%d`, reply)).Length() != 0 {
		t.Fatal("the reply to Claude did not change")
	}
	if got := readers(doc.Find(fmt.Sprintf(`#receipts-%d`, toAll))); strings.Join(got, ",") != f.ag.name+",Codex Two" {
		t.Fatalf("readers %v", got)
	}

	// A new note and a receipt in one poll: the row carries its line.
	latest, _ := doc.Find(`#receipts-cursor`).Attr("data-receipts-after")
	third := post(url.Values{"type": {"note"}, "subject": {"Later"}, "body": {"x"}})
	f.app.readMail(codex, f.session)
	doc = f.pollUntil(fmt.Sprintf("%s/mail/poll?after=%d&receipts=%s", f.url, reply, latest))
	row := doc.Find(fmt.Sprintf(`#note-%d`, third))
	if row.Length() != 1 || strings.Join(readers(row.Find(`[data-testid="note-receipts"]`)), ",") != "Codex Two" ||
		doc.Find(fmt.Sprintf(`#receipts-%d[hx-swap-oob]`, third)).Length() != 0 {
		t.Fatalf("new row with its receipts: %s", truncate(must(doc.Html())))
	}

	// Revoked, Claude's receipts stay.
	if err := f.app.store.RevokeConnection(ctx, ws, f.ag.connID); err != nil {
		t.Fatal(err)
	}
	doc = f.alice.doc(f.alice.get(f.url), http.StatusOK)
	if got := readers(doc.Find(fmt.Sprintf(`#receipts-%d`, toAll))); strings.Join(got, ",") != f.ag.name+",Codex Two" {
		t.Fatalf("after revocation: readers %v", got)
	}
	if got := readers(doc.Find(fmt.Sprintf(`#receipts-%d`, reply))); strings.Join(got, ",") != f.ag.name {
		t.Fatalf("after revocation: reply readers %v", got)
	}
}

// TestAgentRepliesInTeamMail: the owner sees an agent's reply to them as a
// reply to their own slug, and an agent's reply to another agent with that
// agent's slug; both from an outside assistant, both answerable.
func TestAgentRepliesInTeamMail(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	ctx := context.Background()
	ws := f.alice.owner.WorkspaceID
	codex := f.invitedAgent("codex-2", "Codex Two")
	reply := func(ag agent, to string) int64 {
		n, _, err := f.app.store.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ws, ConnectionID: ag.connID, SessionType: f.session.Type,
			SessionID: f.session.PublicID, To: to, Subject: "Re", Body: "answer to " + to, IdempotencyKey: "r-" + to})
		if err != nil {
			t.Fatal(err)
		}
		return n.ID
	}
	toOwner := reply(f.ag, store.OwnerSlug(f.alice.owner.ID))
	toAgent := reply(f.ag, codex.slug)
	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	for _, c := range []struct {
		id int64
		to string
	}{
		{toOwner, store.OwnerSlug(f.alice.owner.ID)},
		{toAgent, codex.slug},
	} {
		row := doc.Find(fmt.Sprintf(`#note-%d`, c.id))
		if row.Find(`[data-testid="note-type"]`).Text() != "reply" || row.Find(`[data-testid="note-recipient"]`).Text() != c.to ||
			row.Find(`[data-testid="note-outside"]`).Length() != 1 ||
			row.Find(`[data-testid="note-sender-slug"]`).Text() != f.ag.slug || row.Find(`[data-testid="reply-button"]`).Length() != 1 {
			t.Fatalf("reply %d: %s", c.id, truncate(must(row.Html())))
		}
	}
}

func must(s string, err error) string {
	if err != nil {
		panic(err)
	}
	return s
}

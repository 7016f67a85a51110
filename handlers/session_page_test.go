package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

func TestSessionPageShowsMailAndPresence(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	f.app.setStatus(f.ag, new("github.com/acme/"+xss), new("feat/"+xss), new("Fixing "+xss))
	long := strings.Repeat("line of a long body\n", 40) + xss
	first := f.app.agentNote(f.ag, f.session.ID, "Started "+xss, "Body "+xss+"\nsecond line")
	second := f.app.agentNote(f.ag, f.session.ID, "Long one", long)

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
		if got := strings.TrimSpace(row.Find(`[data-testid="` + id + `"]`).Text()); got != want {
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
	if body.Find("details .full").Length() != 1 || body.Find(".preview").Length() != 1 || strings.TrimSpace(body.Find(".full").Text()) != long {
		t.Error("long body not collapsed with the full text inside")
	}
	// The poller starts from the newest note, and from no receipt.
	if v, _ := doc.Find(`#mail-poller`).Attr("hx-get"); v != fmt.Sprintf("%s/mail/poll?after=%d&receipts=0", f.url, second) {
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

func TestSessionOtherWorkspaceIs404(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	note := f.app.agentNote(f.ag, f.session.ID, "s", "b")
	bob := f.app.owner("bob@example.com", "Bob's")
	// Bob's own session is fine; Alice's is not found, on every route.
	f.alice.get(f.url) // the mail cache follows the session now
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
	for _, path := range []string{f.url + "/mail", f.url + "/invitations", f.url + fmt.Sprintf("/invitations/%d", f.ag.connID),
		f.url + fmt.Sprintf("/invitations/%d/remove", f.ag.connID)} {
		res := bob.post(path, url.Values{"type": {"note"}, "body": {"b"}, "connection_id": {fmt.Sprint(f.ag.connID)}, "role": {"runner"}})
		if res.StatusCode != http.StatusNotFound {
			t.Errorf("POST %s: %d, want 404", path, res.StatusCode)
		}
	}
	// Bob may not reply to Alice's note from a session of his own either.
	bobProject := bob.project("Mine")
	bobSession := bob.session(bobProject, "Mine")
	res := bob.postHTMX(fmt.Sprintf("/sessions/%d/mail", bobSession.ID), url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(note)}, "body": {"x"}})
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("reply across workspaces: %d, want 404", res.StatusCode)
	}
	role, err := f.app.store.InvitationRole(t.Context(), f.alice.owner.WorkspaceID, f.session.ID, f.ag.connID)
	if err != nil || role != store.RoleContributor {
		t.Fatalf("role changed across workspaces: %q %v", role, err)
	}
}

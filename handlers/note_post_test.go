package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

func TestReply(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	note := f.app.agentNote(f.ag, f.session.ID, "Question "+xss, "Which branch?")
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
	res := f.alice.postHTMX(f.url+"/mail", form)
	if got := res.Header.Get("HX-Retarget"); got != fmt.Sprintf("#composer-reply-%d", note) {
		t.Fatalf("retarget %q", got)
	}
	errDoc := f.alice.doc(res, http.StatusUnprocessableEntity)
	if errDoc.Find(`[data-testid="error-subject"]`).Length() != 1 {
		t.Fatal("no subject error")
	}
	form.Set("subject", "ok")
	form.Set("body", strings.Repeat("b", 10001))
	errDoc = f.alice.doc(f.alice.postHTMX(f.url+"/mail", form), http.StatusUnprocessableEntity)
	if errDoc.Find(`[data-testid="error-body"]`).Length() != 1 {
		t.Fatal("no body error")
	}
	// Replying to nothing is not possible.
	form.Set("body", "x")
	form.Set("reply_to", "999999")
	if res := f.alice.postHTMX(f.url+"/mail", form); res.StatusCode != http.StatusNotFound {
		t.Fatalf("reply to a missing note: %d", res.StatusCode)
	}

	// Send: the response carries the new row (and only rows after "after").
	form = url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(note)}, "subject": {"Re: Question"}, "body": {"Use main.\n" + xss}, "after": {fmt.Sprint(note)}}
	doc := f.alice.doc(f.alice.postHTMX(f.url+"/mail", form), http.StatusOK)
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
	if rows.Find(`[data-testid="note-outside"]`).Length() != 0 {
		t.Fatal("an owner's note is not from an outside assistant")
	}
	// It answers the agent's note: it quotes it, and has its own Reply.
	if got := rows.Find(`[data-testid="note-parent"]`).AttrOr("href", ""); got != fmt.Sprintf("%s?note=%d#note-%d", f.url, note, note) {
		t.Fatalf("the reply links to its parent at %q", got)
	}
	if rows.Find(`[data-testid="reply-button"]`).Length() != 1 {
		t.Fatal("an owner's reply has no Reply")
	}
	if v, _ := doc.Find(fmt.Sprintf(`#reply-slot-%d`, note)).Attr("hx-swap-oob"); v == "" {
		t.Fatal("the inline composer is not closed")
	}
	html, _ = doc.Html()
	noRawXSS(t, html)

	// A double submit posts once.
	f.alice.doc(f.alice.postHTMX(f.url+"/mail", form), http.StatusOK)
	notes, err := f.app.store.ListSessionMail(t.Context(), f.alice.owner.WorkspaceID, f.session.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(notes) != 2 {
		t.Fatalf("%d notes after a double submit, want 2", len(notes))
	}
	reply := notes[0]
	if reply.MessageType != store.MessageReply || reply.RecipientSlug == nil || *reply.RecipientSlug != f.ag.slug ||
		reply.SenderKind != store.SenderOwner || reply.Body != "Use main.\n"+xss {
		t.Fatalf("stored reply %+v", reply)
	}

	// Whole-session and analysis notes; without htmx the post redirects.
	res = f.alice.post(f.url+"/mail", url.Values{"type": {"note"}, "subject": {"All"}, "body": {"to everyone"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("plain post: %d", res.StatusCode)
	}
	doc = f.alice.doc(f.alice.postHTMX(f.url+"/mail", url.Values{"type": {"analysis"}, "subject": {"Why"}, "body": {"private"}, "after": {"0"}}), http.StatusOK)
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

package handlers

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// TestThreads: a reply quotes its parent and links to it in place; a note
// with replies counts them and links to its thread, which shows the note
// and every reply down from it, oldest first, listening to the session.
func TestThreads(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	ctx := t.Context()
	asked := f.app.agentNote(f.ag, f.session.ID, "Which API?", "## v1 or v2\nv2 has structured errors.")
	f.alice.get(f.url)
	// The owner replies to the agent; the agent answers the reply.
	f.alice.doc(f.alice.postHTMX(f.url+"/mail", url.Values{"type": {"reply"}, "reply_to": {fmt.Sprint(asked)}, "body": {"Use v2."}}), http.StatusOK)
	notes, err := f.app.store.ListSessionMail(ctx, f.alice.owner.WorkspaceID, f.session.ID, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	ownerReply := notes[0]
	answer, _, err := f.app.store.PostAgentNote(ctx, store.AgentNote{WorkspaceID: f.ag.workspaceID, ConnectionID: f.ag.connID,
		SessionType: f.session.Type, SessionID: f.session.PublicID, To: ownerReply.SenderSlug, InReplyTo: ownerReply.ID,
		Body: "Done: on v2.", IdempotencyKey: "answer"})
	if err != nil {
		t.Fatal(err)
	}
	unrelated := f.app.agentNote(f.ag, f.session.ID, "Unrelated", "elsewhere")

	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	root := doc.Find(fmt.Sprintf("#note-%d", asked))
	if got := root.Find(`[data-testid="note-replies"]`); got.Text() != "2 replies" || got.AttrOr("href", "") != fmt.Sprintf("%s/notes/%d", f.url, asked) {
		t.Fatalf("the asked note shows %q linking to %q", got.Text(), got.AttrOr("href", ""))
	}
	quote := doc.Find(fmt.Sprintf("#note-%d [data-testid=note-parent]", ownerReply.ID))
	if !strings.Contains(quote.Text(), "Claude") || quote.Find(`[data-testid=note-parent-line]`).Text() != "Which API?" {
		t.Fatalf("the reply quotes %q", quote.Text())
	}
	if got := doc.Find(fmt.Sprintf("#note-%d", answer.ID)).AttrOr("data-in-reply-to", ""); got != fmt.Sprint(ownerReply.ID) {
		t.Fatalf("the answer's row names its parent %q", got)
	}
	if _, ok := doc.Find(fmt.Sprintf("#note-%d", unrelated)).Attr("data-in-reply-to"); ok {
		t.Fatal("a note that answers nothing names a parent")
	}
	// Every note has Reply, the owner's own too.
	if n := doc.Find(`[data-testid="reply-button"]`).Length(); n != 4 {
		t.Fatalf("%d Reply controls for 4 notes", n)
	}

	thread := f.alice.doc(f.alice.get(fmt.Sprintf("%s/notes/%d", f.url, asked)), http.StatusOK)
	if got := noteIDs(thread); len(got) != 3 || got[0] != asked || got[1] != ownerReply.ID || got[2] != answer.ID {
		t.Fatalf("thread %v, want [%d %d %d] oldest first", got, asked, ownerReply.ID, answer.ID)
	}
	list := thread.Find("#mail-list")
	if list.AttrOr("data-thread", "") != fmt.Sprint(asked) {
		t.Fatal("the thread's list does not say which thread it keeps")
	}
	if sse := thread.Find("[data-stream]").AttrOr("sse-connect", ""); !strings.HasPrefix(sse, f.url+"/stream?after=") {
		t.Fatalf("the thread does not listen to its session: %q", sse)
	}
	if got := thread.Find(`[data-testid="thread-composer"] [data-testid="composer-to"]`).Text(); got != f.ag.slug {
		t.Fatalf("the thread's composer answers %q", got)
	}
	// A thread starting lower down holds only what is below it.
	sub := f.alice.doc(f.alice.get(fmt.Sprintf("%s/notes/%d", f.url, ownerReply.ID)), http.StatusOK)
	if got := noteIDs(sub); len(got) != 2 || got[0] != ownerReply.ID {
		t.Fatalf("sub-thread %v", got)
	}
	for _, path := range []string{fmt.Sprintf("%s/notes/%d", f.url, asked+1000), fmt.Sprintf("%s/notes/x", f.url)} {
		if res := f.alice.get(path); res.StatusCode != http.StatusNotFound {
			t.Fatalf("GET %s: %d, want 404", path, res.StatusCode)
		}
	}
}

// TestNoteInPlace: ?note= opens the page of notes a note is on; an old
// note's page starts with it.
func TestNoteInPlace(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	first := f.app.agentNote(f.ag, f.session.ID, "The first", "old")
	var last int64
	for i := range store.MailPageSize + 5 {
		last = f.app.agentNote(f.ag, f.session.ID, fmt.Sprint("Later ", i), "x")
	}
	doc := f.alice.doc(f.alice.get(fmt.Sprintf("%s?note=%d", f.url, first)), http.StatusOK)
	if got := noteIDs(doc); len(got) == 0 || got[0] != first {
		t.Fatalf("an old note's page starts at %v, want %d", got[:1], first)
	}
	if doc.Find(`[data-testid="mail-paged"]`).Length() != 1 {
		t.Fatal("the older page does not say so")
	}
	doc = f.alice.doc(f.alice.get(fmt.Sprintf("%s?note=%d", f.url, last)), http.StatusOK)
	if got := noteIDs(doc); got[0] != last || doc.Find(`[data-testid="mail-paged"]`).Length() != 0 {
		t.Fatalf("a recent note opens the newest page: %v", got[:1])
	}
}

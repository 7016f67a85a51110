package store_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

func TestPostOwnerNote(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	agentNote := f.agentNote(t, "question")
	base := store.OwnerNote{WorkspaceID: f.owner.WorkspaceID, SessionID: f.sess.ID, OwnerID: f.owner.ID}

	for _, tc := range []struct {
		name  string
		edit  func(*store.OwnerNote)
		field string
	}{
		{"unknown type", func(n *store.OwnerNote) { n.Type = "memo"; n.Body = "b" }, "type"},
		{"subject too long", func(n *store.OwnerNote) { n.Type = "note"; n.Subject = strings.Repeat("é", 201); n.Body = "b" }, "subject"},
		{"empty body", func(n *store.OwnerNote) { n.Type = "note"; n.Body = " \n " }, "body"},
		{"body too long", func(n *store.OwnerNote) { n.Type = "note"; n.Body = strings.Repeat("x", 10001) }, "body"},
		{"reply without note", func(n *store.OwnerNote) { n.Type = "reply"; n.Body = "b" }, "reply_to"},
		{"reply to a missing note", func(n *store.OwnerNote) { n.Type = "reply"; n.ReplyTo = agentNote + 100; n.Body = "b" }, "reply_to"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := base
			tc.edit(&in)
			_, _, err := f.st.PostOwnerNote(ctx, in)
			var fe *store.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Fatalf("err %v, want a FieldError on %s", err, tc.field)
			}
		})
	}

	// A reply goes to the agent's sender slug; 10,000 characters is fine.
	in := base
	in.Type, in.ReplyTo, in.Subject, in.Body = store.MessageReply, agentNote, "Re: question", strings.Repeat("y", 10000)
	n, dup, err := f.st.PostOwnerNote(ctx, in)
	if err != nil || dup {
		t.Fatal(err, dup)
	}
	if n.RecipientSlug == nil || *n.RecipientSlug != "ext-ada" || n.SenderSlug != store.OwnerSlug(f.owner.ID) || n.SenderName != "Olive" ||
		n.InReplyTo == nil || *n.InReplyTo != agentNote {
		t.Fatalf("reply %+v", n)
	}
	// The same form submitted again, even concurrently, posts once.
	in = base
	in.Type, in.Body = store.MessageAnalysis, "owners only"
	var wg sync.WaitGroup
	ids := make([]int64, 4)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, _, err := f.st.PostOwnerNote(ctx, in)
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = n.ID
		}()
	}
	wg.Wait()
	for _, id := range ids[1:] {
		if id != ids[0] {
			t.Fatalf("double submit wrote several notes: %v", ids)
		}
	}
	// Analysis notes get no resource event; replies do.
	var events int
	if err := storetest.SQL(t, f.st).QueryRow(`SELECT count(*) FROM resource_events WHERE note_id = $1`, ids[0]).Scan(&events); err != nil || events != 0 {
		t.Fatalf("analysis note has %d events (%v)", events, err)
	}
	// Another workspace's session is not found.
	in.WorkspaceID = f.owner.WorkspaceID + 1
	if _, _, err := f.st.PostOwnerNote(ctx, in); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other workspace: %v", err)
	}
}

// TestReplyTarget: an owner's reply can answer any note of the session and
// nothing else, with one error for every other note, which PostOwnerNote
// gives too.
func TestReplyTarget(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	agentNote := f.agentNote(t, "question")
	ownerNote := f.ownerNote(t, "to all")

	for _, id := range []int64{agentNote, ownerNote.ID} {
		if n, err := f.st.ReplyTarget(ctx, ws, f.sess.ID, id, f.owner.ID); err != nil || n.ID != id {
			t.Fatalf("note %d: %+v %v", id, n, err)
		}
	}
	for name, c := range map[string]struct{ ws, session, note int64 }{
		"no such note":           {ws, f.sess.ID, agentNote + 100},
		"another session's note": {ws, f.sess.ID + 1, agentNote},
		"another workspace":      {ws + 1, f.sess.ID, agentNote},
	} {
		if _, err := f.st.ReplyTarget(ctx, c.ws, c.session, c.note, f.owner.ID); err != store.ErrNotAnswerable {
			t.Errorf("%s: %v, want ErrNotAnswerable", name, err)
		}
	}
	_, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: f.owner.ID,
		Type: store.MessageReply, ReplyTo: agentNote + 100, Body: "b"})
	if err != store.ErrNotAnswerable {
		t.Fatalf("PostOwnerNote to a missing note: %v", err)
	}
}

// TestSentBy: an owner's own note is theirs alone; an agent's note is no
// owner's.
func TestSentBy(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	mine := f.ownerNote(t, "mine")
	agent, err := f.st.GetSessionNote(context.Background(), f.owner.WorkspaceID, f.sess.ID, f.agentNote(t, "agent"))
	if err != nil {
		t.Fatal(err)
	}
	if !mine.SentBy(f.owner.ID) || mine.SentBy(f.owner.ID+1) || agent.SentBy(f.owner.ID) || mine.FromAgent() {
		t.Fatalf("mine %+v, agent %+v", mine, agent)
	}
}

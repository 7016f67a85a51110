package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestOwnerRepliesFollowTheThread: an owner's reply records the note it
// answers and goes where ReplyAddress says, whoever wrote that note.
func TestOwnerRepliesFollowTheThread(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	other := storetest.SQL(t, f.st).InsertOwner(ws, "Otto")
	agentNote := f.agentNote(t, "question")
	mine := f.ownerNote(t, "to all")
	theirs, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: other,
		Type: store.MessageNote, Subject: "from Otto", Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	analysis, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: other,
		Type: store.MessageAnalysis, Body: "thinking"})
	if err != nil {
		t.Fatal(err)
	}
	reply := func(parent int64, body string) *store.Note {
		t.Helper()
		n, dup, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: f.owner.ID,
			Type: store.MessageReply, ReplyTo: parent, Body: body})
		if err != nil || dup {
			t.Fatalf("reply to %d: %v %v", parent, err, dup)
		}
		if n.InReplyTo == nil || *n.InReplyTo != parent {
			t.Fatalf("reply to %d records in_reply_to %v", parent, n.InReplyTo)
		}
		return n
	}
	toAgent := reply(agentNote, "to the agent")
	toMine := reply(mine.ID, "more for all")
	toReply := reply(toAgent.ID, "and again")
	toOtto := reply(theirs.ID, "to Otto")
	toAnalysis := reply(analysis.ID, "owners only")
	for _, c := range []struct {
		name, typ string
		n         *store.Note
		to        string // "" the whole session
	}{
		{"an agent's note: its sender", store.MessageReply, toAgent, "ext-ada"},
		{"my note to all: all again", store.MessageNote, toMine, ""},
		{"my reply: its recipient", store.MessageReply, toReply, "ext-ada"},
		{"another owner's note: that owner", store.MessageReply, toOtto, store.OwnerSlug(other)},
		{"an analysis note: owners only", store.MessageAnalysis, toAnalysis, ""},
	} {
		got := ""
		if c.n.RecipientSlug != nil {
			got = *c.n.RecipientSlug
		}
		if c.n.MessageType != c.typ || got != c.to {
			t.Errorf("%s: %s to %q, want %s to %q", c.name, c.n.MessageType, got, c.typ, c.to)
		}
	}

	// The listed notes quote their parent and count the thread below them.
	notes, err := f.st.ListSessionMail(ctx, ws, f.sess.ID, 0, 50)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]store.Note{}
	for _, n := range notes {
		byID[n.ID] = n
	}
	if got := byID[agentNote].Replies; got != 2 {
		t.Errorf("the agent's note has %d replies down its thread, want 2", got)
	}
	if got := byID[toAgent.ID].Replies; got != 1 {
		t.Errorf("the first reply has %d replies, want 1", got)
	}
	if p := byID[toReply.ID].Parent; p == nil || p.ID != toAgent.ID || p.SenderName != "Olive" || p.Excerpt != "to the agent" {
		t.Errorf("the reply to a reply quotes %+v", p)
	}
	if byID[agentNote].Parent != nil || byID[mine.ID].Replies != 1 {
		t.Errorf("the agent's note %+v, mine %+v", byID[agentNote], byID[mine.ID])
	}
	after, err := f.st.SessionMailAfter(ctx, ws, f.sess.ID, toReply.ID-1)
	if err != nil || len(after) == 0 || after[len(after)-1].Parent == nil {
		t.Fatalf("SessionMailAfter does not quote the parent: %+v %v", after, err)
	}

	// The database keeps a parent in its session.
	other2, err := f.st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: f.sess.ProjectID, Type: "team_session", Title: "T"})
	if err != nil {
		t.Fatal(err)
	}
	err = storetest.SQL(t, f.st).QueryRow(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body, in_reply_to)
		VALUES ($1, $2, 'owner', $3, 'owner-x', 'O', 'note', '', 'b', $4) RETURNING id`, ws, other2.ID, f.owner.ID, agentNote).Scan(new(int64))
	if err == nil {
		t.Fatal("a note answering another session's note was written")
	}
}

// TestAgentRepliesName: reply_to_sender's in_reply_to is a note of the
// session the agent may read; anything else is refused, naming the field,
// and writes nothing; the key keeps its note.
func TestAgentRepliesName(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	asked := f.ownerNote(t, "which API?")
	analysis, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: f.owner.ID,
		Type: store.MessageAnalysis, Body: "owners only"})
	if err != nil {
		t.Fatal(err)
	}
	elsewhere, err := f.st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: f.sess.ProjectID, Type: "team_session", Title: "T"})
	if err != nil {
		t.Fatal(err)
	}
	otherNote, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: elsewhere.ID, OwnerID: f.owner.ID,
		Type: store.MessageNote, Body: "elsewhere"})
	if err != nil {
		t.Fatal(err)
	}
	in := store.AgentNote{WorkspaceID: ws, ConnectionID: f.connID, SessionType: f.sess.Type, SessionID: f.sess.PublicID,
		To: asked.SenderSlug, Subject: "Re", Body: "v2", IdempotencyKey: "k1"}
	for name, parent := range map[string]int64{
		"an analysis note":       analysis.ID,
		"another session's note": otherNote.ID,
		"no such note":           otherNote.ID + 100,
	} {
		bad := in
		bad.InReplyTo = parent
		_, _, err := f.st.PostAgentNote(ctx, bad)
		var fe *store.FieldError
		if !errors.As(err, &fe) || fe.Field != "in_reply_to" {
			t.Errorf("%s: %v, want a refusal naming in_reply_to", name, err)
		}
	}
	in.InReplyTo = asked.ID
	n, dup, err := f.st.PostAgentNote(ctx, in)
	if err != nil || dup || n.InReplyTo == nil || *n.InReplyTo != asked.ID {
		t.Fatalf("reply: %+v %v %v", n, dup, err)
	}
	again, dup, err := f.st.PostAgentNote(ctx, in)
	if err != nil || !dup || again.ID != n.ID {
		t.Fatalf("retry: %+v %v %v", again, dup, err)
	}
	in.InReplyTo = 0
	if _, _, err := f.st.PostAgentNote(ctx, in); err != store.ErrKeyReused {
		t.Fatalf("the same key answering no note: %v, want ErrKeyReused", err)
	}
	// read_session_mail returns it.
	mail, _, err := f.st.ReadAgentMail(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 10)
	if err != nil || len(mail) == 0 || mail[0].ID != n.ID || mail[0].InReplyTo == nil || *mail[0].InReplyTo != asked.ID {
		t.Fatalf("read mail: %+v %v", mail, err)
	}
}

// TestRepliesToARevokedAgent: a reply that would go to an agent whose
// connection is revoked is refused, whichever note it answers; one to an
// owner is not.
func TestRepliesToARevokedAgent(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	asked := f.agentNote(t, "question")
	mine, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: f.owner.ID,
		Type: store.MessageReply, ReplyTo: asked, Body: "answer"})
	if err != nil {
		t.Fatal(err)
	}
	toAll := f.ownerNote(t, "to all")
	if err := f.st.RevokeConnection(ctx, ws, f.connID); err != nil {
		t.Fatal(err)
	}
	for name, id := range map[string]int64{"its note": asked, "my reply to it": mine.ID} {
		if _, err := f.st.ReplyTarget(ctx, ws, f.sess.ID, id, f.owner.ID); err != store.ErrRecipientRevoked {
			t.Errorf("%s: %v, want ErrRecipientRevoked", name, err)
		}
	}
	if _, err := f.st.ReplyTarget(ctx, ws, f.sess.ID, toAll.ID, f.owner.ID); err != nil {
		t.Errorf("my note to all: %v", err)
	}
}

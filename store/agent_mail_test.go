package store_test

import (
	"context"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// TestAgentMailSaysWhatIsAddressed: read_session_mail's page marks the
// notes addressed to the reader, the ones its unread hint counts: an
// owner's note to the whole session and a reply to its slug, not its own.
func TestAgentMailSaysWhatIsAddressed(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	own := f.agentNote(t, "mine")
	toAll := f.ownerNote(t, "to all")
	reply, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: ws, SessionID: f.sess.ID, OwnerID: f.owner.ID,
		Type: store.MessageReply, ReplyTo: own, Body: "to ada"})
	if err != nil {
		t.Fatal(err)
	}
	mail, unread, err := f.st.ReadAgentMail(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 10)
	if err != nil || len(mail) != 3 || unread.Total != 0 {
		t.Fatalf("mail %+v unread %+v %v", mail, unread, err)
	}
	want := map[int64]bool{own: false, toAll.ID: true, reply.ID: true}
	for _, n := range mail {
		if n.Addressed != want[n.ID] {
			t.Errorf("note %d (%s, %q): addressed %v", n.ID, n.SenderKind, n.Subject, n.Addressed)
		}
	}
}

package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestDuplicateNotesLeaveNoSequenceGap: a retried key and a refused key reuse
// must not consume event sequence numbers.
func TestDuplicateNotesLeaveNoSequenceGap(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, _, pa, _ := twoWorkspaces(t, st)
	s, conn := sessionAndConnection(t, st, a, pa, "agent_session")
	if _, err := st.ClaimProfile(ctx, a.WorkspaceID, conn.ID, "alice", "Alice"); err != nil {
		t.Fatal(err)
	}
	if err := st.Invite(ctx, a.WorkspaceID, s.ID, conn.ID, store.RoleContributor); err != nil { // event 1
		t.Fatal(err)
	}
	post := func(key, body string) (*store.Note, bool, error) {
		return st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: a.WorkspaceID, ConnectionID: conn.ID, SessionType: s.Type, SessionID: s.PublicID,
			Subject: "s", Body: body, IdempotencyKey: key})
	}
	first, dup, err := post("k1", "b") // event 2
	if err != nil || dup {
		t.Fatalf("first: %v %v", dup, err)
	}
	again, dup, err := post("k1", "b")
	if err != nil || !dup || again.ID != first.ID {
		t.Fatalf("retry: %+v %v %v", again, dup, err)
	}
	if _, _, err := post("k1", "other body"); !errors.Is(err, store.ErrKeyReused) {
		t.Fatalf("reuse with other content: %v", err)
	}
	if _, _, err := post("k2", "b2"); err != nil { // event 3
		t.Fatal(err)
	}
	var n, maxSeq, last int64
	db := storetest.SQL(t, st)
	if err := db.QueryRow(`SELECT count(*), max(sequence) FROM resource_events WHERE session_id = $1`, s.ID).Scan(&n, &maxSeq); err != nil {
		t.Fatal(err)
	}
	if err := db.QueryRow(`SELECT last_event_seq FROM sessions WHERE id = $1`, s.ID).Scan(&last); err != nil {
		t.Fatal(err)
	}
	if n != 3 || maxSeq != 3 || last != 3 {
		t.Fatalf("events %d, max sequence %d, session counter %d; want 3, 3, 3", n, maxSeq, last)
	}
}

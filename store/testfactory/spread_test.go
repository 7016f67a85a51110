package testfactory_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

func TestMain(m *testing.M) { storetest.Main(m) }

// newSpread loads a small spread (2 workspaces of 8 sessions, 4 agents
// each) with notes notes.
func newSpread(t *testing.T, notes int) (*store.Store, *testfactory.Spread) {
	t.Helper()
	st, sp, _ := newSpreadDB(t, notes)
	return st, sp
}

// newSpreadDB is newSpread with the pool it loaded through.
func newSpreadDB(t *testing.T, notes int) (*store.Store, *testfactory.Spread, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	st, pool := openStore(t)
	sp, err := testfactory.NewSpread(ctx, st, pool, testfactory.SpreadOpts{Name: "t", Password: "a fixture password", Resource: "http://localhost/mcp",
		Workspaces: 2, Projects: 2, Sessions: 8, Agents: 4, BusyEvery: 4, MinInvitations: 2, MaxInvitations: 6})
	if err != nil {
		t.Fatal(err)
	}
	if err := sp.Fill(ctx, notes); err != nil {
		t.Fatal(err)
	}
	return st, sp, pool
}

// ownersMail is a session's whole mail as its owners read it, newest first.
func ownersMail(t *testing.T, st *store.Store, workspaceID, sessionID int64) []store.Note {
	t.Helper()
	var out []store.Note
	for before := int64(0); ; {
		page, err := st.ListSessionMail(context.Background(), workspaceID, sessionID, before, 50)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, page[:min(len(page), 50)]...)
		if len(page) <= 50 {
			return out
		}
		before = page[49].ID
	}
}

func TestSpreadNotesAreTheOwnersMail(t *testing.T) {
	t.Parallel()
	const notes = 600
	st, sp := newSpread(t, notes)
	total := 0
	for _, s := range sp.Sessions {
		o := sp.Owners[s.Owner]
		for _, n := range ownersMail(t, st, o.WorkspaceID, s.ID) {
			total++
			if n.SenderKind == store.SenderOwner && n.SenderSlug != store.OwnerSlug(o.ID) {
				t.Fatalf("owner's note %d from %q, want %q", n.ID, n.SenderSlug, store.OwnerSlug(o.ID))
			}
			if id, ok := store.ParseOwnerSlug(deref(n.RecipientSlug)); ok && id != o.ID {
				t.Fatalf("note %d to owner %d of another workspace", n.ID, id)
			}
		}
	}
	if total != notes {
		t.Fatalf("the owners read %d notes, want %d", total, notes)
	}
	// The measured owner reads all but the newest 5 of Sessions[0]; a
	// NeverRead session is wholly unread.
	ctx := context.Background()
	o := sp.Owners[0]
	unread, err := st.UnreadMail(ctx, o.WorkspaceID, o.ID)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[int64]int{}
	for _, u := range unread {
		byID[u.SessionID] = u.Unread
	}
	// Unread as the store counts it: others' notes, the owner's own never.
	others := func(mail []store.Note) int {
		k := 0
		for _, n := range mail {
			if n.SenderOwnerID == nil || *n.SenderOwnerID != o.ID {
				k++
			}
		}
		return k
	}
	busy := ownersMail(t, st, o.WorkspaceID, sp.Sessions[0].ID)
	if got, want := byID[sp.Sessions[0].ID], others(busy[:5]); got != want || want == 0 {
		t.Errorf("busy session: %d unread, want %d", got, want)
	}
	never := sp.Sessions[4]
	if !never.NeverRead {
		t.Fatal("Sessions[4] is not a never-read one")
	}
	if got, want := byID[never.ID], min(others(ownersMail(t, st, o.WorkspaceID, never.ID)), store.MaxUnreadCounted); got != want || want == 0 {
		t.Errorf("never-read session: %d unread, want %d", got, want)
	}
}

func TestSpreadEventsAreTheStores(t *testing.T) {
	t.Parallel()
	st, sp := newSpread(t, 300)
	ctx := context.Background()
	s, heavy := sp.Sessions[0], sp.Agents[0]
	ws := sp.Owners[0].WorkspaceID
	// A note the store writes itself follows the loaded ones.
	own, _, err := st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ws, ConnectionID: heavy.ConnectionID, SessionType: s.Type, SessionID: s.PublicID,
		Subject: "After the load", Body: "Written by the store", IdempotencyKey: "k"})
	if err != nil {
		t.Fatal(err)
	}
	posted := map[int64]store.Note{}
	for _, n := range ownersMail(t, st, ws, s.ID) {
		if n.MessageType != store.MessageAnalysis {
			posted[n.ID] = n
		}
	}
	var seq []int64
	for after := int64(0); ; {
		evs, next, err := st.PollEvents(ctx, ws, heavy.ConnectionID, s.Type, s.PublicID, after, store.MaxEventPage)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			if e.Kind != "note_posted" {
				continue
			}
			seq = append(seq, e.Sequence)
			n, ok := posted[*e.NoteID]
			if !ok {
				t.Fatalf("event %d of note %d, not a posted note of the session", e.Sequence, *e.NoteID)
			}
			delete(posted, n.ID)
			var got map[string]any
			if err := json.Unmarshal(e.Payload, &got); err != nil {
				t.Fatal(err)
			}
			want := map[string]any{"note_id": float64(n.ID), "sender_slug": n.SenderSlug, "message_type": n.MessageType}
			if !maps.Equal(got, want) {
				t.Fatalf("event %d: payload %v, want %v", e.Sequence, got, want)
			}
		}
		if len(evs) == 0 {
			break
		}
		after = next
	}
	if len(posted) > 0 {
		t.Fatalf("%d posted notes without an event", len(posted))
	}
	if !slices.IsSorted(seq) || seq[len(seq)-1]-seq[0] != int64(len(seq)-1) {
		t.Fatalf("note events' sequences not consecutive: %v", seq)
	}
	if last := seq[len(seq)-1]; len(seq) < 2 || *mustLast(t, st, ws, heavy.ConnectionID, s).NoteID != own.ID || last != seq[len(seq)-2]+1 {
		t.Fatalf("the store's own note does not follow the loaded ones")
	}
}

// mustLast is the last event of a session an agent can poll.
func mustLast(t *testing.T, st *store.Store, ws, conn int64, s testfactory.Session) store.ResourceEvent {
	t.Helper()
	var last store.ResourceEvent
	for after := int64(0); ; {
		evs, next, err := st.PollEvents(context.Background(), ws, conn, s.Type, s.PublicID, after, store.MaxEventPage)
		if err != nil {
			t.Fatal(err)
		}
		if len(evs) == 0 {
			return last
		}
		last, after = evs[len(evs)-1], next
	}
}

func TestSpreadAgentsReadAsTheStoreSays(t *testing.T) {
	t.Parallel()
	st, sp := newSpread(t, 600)
	ctx := context.Background()
	ws := sp.Owners[0].WorkspaceID
	heavy, light := sp.Agents[0], sp.Agents[1]
	if heavy.KeepsUp || !light.KeepsUp {
		t.Fatal("Agents[0] keeps up or Agents[1] does not")
	}
	// Not invited: the store refuses the read.
	if s := sp.Sessions[2]; slices.Contains(s.Invited, 1) {
		t.Fatal("Agents[1] is invited to Sessions[2]")
	} else if _, _, err := st.ReadAgentMail(ctx, ws, light.ConnectionID, s.Type, s.PublicID, 0, 10); !errors.Is(err, store.ErrForbidden) {
		t.Fatalf("an agent not invited read the session: %v", err)
	}
	// Keeping up: nothing unread; far behind: mail addressed to it unread.
	if u, err := st.CountUnread(ctx, light.ConnectionID); err != nil || u.Total != 0 {
		t.Fatalf("the agent that keeps up has %d unread (%v)", u.Total, err)
	}
	if u, err := st.CountUnread(ctx, heavy.ConnectionID); err != nil || u.Total == 0 {
		t.Fatalf("the agent far behind has nothing unread (%v)", err)
	}
	// The receipts on owners' notes are those of exactly the notes
	// read_session_mail returns each agent that keeps up.
	exercised := false
	for _, s := range sp.Sessions {
		ws := sp.Owners[s.Owner].WorkspaceID
		var ownerNotes []int64
		for _, n := range ownersMail(t, st, ws, s.ID) {
			if n.SenderKind == store.SenderOwner {
				ownerNotes = append(ownerNotes, n.ID)
			}
		}
		for _, ag := range s.Invited {
			if a := sp.Agents[ag]; a.KeepsUp {
				read := checkReceipts(t, st, ws, s, a.ConnectionID, ownerNotes)
				exercised = exercised || (read > 0 && read < len(ownerNotes))
			}
		}
	}
	if !exercised {
		t.Fatal("no agent reads some owners' notes of a session but not all: the fixture does not exercise who may read")
	}
}

// checkReceipts checks that the agent's receipts on the owners' notes of
// the session are on the notes read_session_mail returns it, and returns
// how many.
func checkReceipts(t *testing.T, st *store.Store, ws int64, s testfactory.Session, conn int64, ownerNotes []int64) int {
	t.Helper()
	ctx := context.Background()
	receipts, err := st.NoteReceipts(ctx, ws, s.ID, ownerNotes)
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[int64]bool{}
	for _, r := range receipts {
		if r.ConnectionID == conn {
			loaded[r.NoteID] = true
		}
	}
	read := map[int64]bool{}
	for before := int64(0); ; {
		page, _, err := st.ReadAgentMail(ctx, ws, conn, s.Type, s.PublicID, before, store.MaxMailPage)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range page[:min(len(page), store.MaxMailPage)] {
			if n.SenderKind == store.SenderOwner {
				read[n.ID] = true
			}
		}
		if len(page) <= store.MaxMailPage {
			break
		}
		before = page[store.MaxMailPage-1].ID
	}
	if !maps.Equal(loaded, read) {
		t.Fatalf("session %d, connection %d: receipts on %v, but read_session_mail returns %v", s.ID, conn,
			slices.Sorted(maps.Keys(loaded)), slices.Sorted(maps.Keys(read)))
	}
	return len(read)
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestSpreadEveryBusySessionHearsItsOwnerAndAgents(t *testing.T) {
	t.Parallel()
	st, sp := newSpread(t, 600)
	for i, s := range sp.Sessions {
		kinds := map[store.SenderKind]int{}
		for _, n := range ownersMail(t, st, sp.Owners[s.Owner].WorkspaceID, s.ID) {
			kinds[n.SenderKind]++
		}
		switch {
		case kinds[store.SenderOwner]+kinds[store.SenderAgent] == 0:
			t.Errorf("Sessions[%d] holds no notes", i)
		case s.Busy && len(s.Invited) > 0 && (kinds[store.SenderOwner] == 0 || kinds[store.SenderAgent] == 0):
			t.Errorf("busy Sessions[%d]: %d notes from its owner, %d from agents; want both", i, kinds[store.SenderOwner], kinds[store.SenderAgent])
		}
	}
}

func TestFillBucketsGrantsTheNextWrites(t *testing.T) {
	t.Parallel()
	st, sp, pool := newSpreadDB(t, 50)
	ctx := context.Background()
	s, heavy, ws := sp.Sessions[0], sp.Agents[0], sp.Owners[0].WorkspaceID
	if err := st.SetProjectWriteLimits(ctx, ws, s.ProjectID, store.WriteLimits{PerMinute: 1, Burst: 2}); err != nil {
		t.Fatal(err)
	}
	k := 0
	post := func() error {
		k++
		_, _, err := st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ws, ConnectionID: heavy.ConnectionID, SessionType: s.Type, SessionID: s.PublicID,
			Subject: "Write", Body: "A write that draws on the bucket", IdempotencyKey: fmt.Sprintf("k%d", k)})
		return err
	}
	var limited *store.WriteLimited
	for range 2 {
		for range 2 {
			if err := post(); err != nil {
				t.Fatalf("write %d refused with a full bucket: %v", k, err)
			}
		}
		if err := post(); !errors.As(err, &limited) {
			t.Fatalf("write %d past the burst: %v, want refused", k, err)
		}
		if err := testfactory.FillBuckets(ctx, pool, []int64{heavy.ConnectionID}); err != nil {
			t.Fatal(err)
		}
	}
}

// openStore opens a store and a pool of its own on a new database.
func openStore(t *testing.T) (*store.Store, *pgxpool.Pool) {
	t.Helper()
	ctx := context.Background()
	dsn := storetest.NewDatabase(t)
	st, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	pool, err := pgxpool.New(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	return st, pool
}

package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

const testResource = "http://localhost:8080/mcp"

// agentWorld is a workspace with an owner and a project, written directly.
func agentWorld(t *testing.T) (*store.Store, int64, int64, int64) {
	t.Helper()
	ctx := context.Background()
	st := storetest.New(t)
	ws, owner := storetest.SQL(t, st).InsertWorkspace("W")
	p, err := st.CreateProject(ctx, ws, "P")
	if err != nil {
		t.Fatal(err)
	}
	return st, ws, owner, p.ID
}

func newConn(t *testing.T, st *store.Store, ws, owner int64, projects ...int64) *store.Connection {
	t.Helper()
	c, token, _, err := st.CreateTokenConnection(context.Background(), store.NewConnection{
		WorkspaceID: ws, OwnerID: owner, ClientName: "c", Scopes: store.AllScopes, ProjectIDs: projects}, testResource, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	ti, err := st.UseAccessToken(context.Background(), token, testResource)
	if err != nil || ti.ConnectionID != c.ID {
		t.Fatalf("token does not verify: %v", err)
	}
	return c
}

func TestClaimProfileConcurrentSameHandle(t *testing.T) {
	t.Parallel()
	st, ws, owner, _ := agentWorld(t)
	ctx := context.Background()
	const n = 8
	conns := make([]*store.Connection, n)
	for i := range conns {
		conns[i] = newConn(t, st, ws, owner)
	}
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = st.ClaimProfile(ctx, ws, conns[i].ID, "alice", "Alice")
		}()
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("unexpected error: %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d claims of one handle succeeded", won)
	}
}

func TestClaimProfileValidatesAndKeepsSlug(t *testing.T) {
	t.Parallel()
	st, ws, owner, _ := agentWorld(t)
	ctx := context.Background()
	c := newConn(t, st, ws, owner)
	var fe *store.FieldError
	if _, err := st.ClaimProfile(ctx, ws, c.ID, "A", "x"); !errors.As(err, &fe) || fe.Field != "handle" {
		t.Fatalf("bad handle: %v", err)
	}
	if _, err := st.ClaimProfile(ctx, ws, c.ID, "ab", "  "); !errors.As(err, &fe) || fe.Field != "display_name" {
		t.Fatalf("blank name: %v", err)
	}
	p, err := st.ClaimProfile(ctx, ws, c.ID, "ab", "AB")
	if err != nil || p.SenderSlug != "ext-ab" {
		t.Fatalf("%+v %v", p, err)
	}
	if p, err = st.ClaimProfile(ctx, ws, c.ID, "cd", "CD"); err != nil || p.SenderSlug != "ext-ab" || p.Handle != "cd" {
		t.Fatalf("re-claim: %+v %v", p, err)
	}
	if got, err := st.GetProfile(ctx, ws, c.ID); err != nil || got.SenderSlug != "ext-ab" || got.DisplayName != "CD" {
		t.Fatalf("get: %+v %v", got, err)
	}
	other := newConn(t, st, ws, owner)
	if _, err := st.GetProfile(ctx, ws, other.ID); !errors.Is(err, store.ErrNoProfile) {
		t.Fatalf("no profile: %v", err)
	}
	if err := st.RevokeConnection(ctx, ws, other.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimProfile(ctx, ws, other.ID, "ef", "EF"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoked connection claimed: %v", err)
	}
}

func TestSetStatusStore(t *testing.T) {
	t.Parallel()
	st, ws, owner, _ := agentWorld(t)
	ctx := context.Background()
	c := newConn(t, st, ws, owner)
	task := "t"
	set := store.StatusUpdate{Task: store.StatusField{Set: true, Value: &task}}
	if _, err := st.SetStatus(ctx, ws, c.ID, set); !errors.Is(err, store.ErrNoProfile) {
		t.Fatalf("before claim: %v", err)
	}
	if _, err := st.SetStatus(ctx, ws, c.ID, store.StatusUpdate{}); !errors.Is(err, store.ErrNoProfile) {
		t.Fatalf("empty before claim: %v", err)
	}
	if _, err := st.ClaimProfile(ctx, ws, c.ID, "ab", "AB"); err != nil {
		t.Fatal(err)
	}
	long := string(make([]rune, 281))
	var fe *store.FieldError
	if _, err := st.SetStatus(ctx, ws, c.ID, store.StatusUpdate{Task: store.StatusField{Set: true, Value: &long}}); !errors.As(err, &fe) || fe.Field != "task" {
		t.Fatalf("long task: %v", err)
	}
	s, err := st.SetStatus(ctx, ws, c.ID, set)
	if err != nil || s.Task == nil || *s.Task != "t" || s.Repo != nil || s.UpdatedAt == nil {
		t.Fatalf("%+v %v", s, err)
	}
	// Revocation clears the status.
	if err := st.RevokeConnection(ctx, ws, c.ID); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := storetest.SQL(t, st).QueryRow(`SELECT count(*) FROM statuses`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("statuses after revoke: %d %v", n, err)
	}
}

func TestPostAgentNoteStore(t *testing.T) {
	t.Parallel()
	st, ws, owner, p := agentWorld(t)
	ctx := context.Background()
	c := newConn(t, st, ws, owner, p)
	sess, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: p, Type: "team_session", Title: "T"})
	if err != nil {
		t.Fatal(err)
	}
	in := store.AgentNote{WorkspaceID: ws, ConnectionID: c.ID, SessionType: sess.Type, SessionID: sess.PublicID,
		Subject: "s", Body: "b", IdempotencyKey: "k"}
	// Neither invited nor claimed: claiming is what to do first.
	if _, _, err := st.PostAgentNote(ctx, in); !errors.Is(err, store.ErrNoProfile) {
		t.Fatalf("no profile, not invited: %v", err)
	}
	if _, err := st.ClaimProfile(ctx, ws, c.ID, "ab", "AB"); err != nil {
		t.Fatal(err)
	}
	if _, _, err := st.PostAgentNote(ctx, in); !errors.Is(err, store.ErrForbidden) {
		t.Fatalf("not invited: %v", err)
	}
	if err := st.Invite(ctx, ws, sess.ID, c.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	missing := in
	missing.SessionID = "nope"
	if _, _, err := st.PostAgentNote(ctx, missing); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("missing session: %v", err)
	}
	n1, dup, err := st.PostAgentNote(ctx, in)
	if err != nil || dup || n1.SenderSlug != "ext-ab" || n1.SenderName != "AB" || n1.RecipientSlug != nil || n1.MessageType != "note" {
		t.Fatalf("%+v %v %v", n1, dup, err)
	}
	n2, dup, err := st.PostAgentNote(ctx, in)
	if err != nil || !dup || n2.ID != n1.ID {
		t.Fatalf("retry: %+v %v %v", n2, dup, err)
	}
	other := in
	other.Body = "changed"
	if _, _, err := st.PostAgentNote(ctx, other); !errors.Is(err, store.ErrKeyReused) || !errors.Is(err, store.ErrInvalid) {
		t.Fatalf("reused key: %v", err)
	}
	events, next, err := st.PollEvents(ctx, ws, c.ID, sess.Type, sess.PublicID, 0, 100)
	if err != nil || len(events) != 2 || next != 2 || events[1].Kind != "note_posted" || *events[1].NoteID != n1.ID {
		t.Fatalf("events %+v next %d err %v", events, next, err)
	}
	mail, _, err := st.ReadAgentMail(ctx, ws, c.ID, sess.Type, sess.PublicID, 0, 20)
	if err != nil || len(mail) != 1 || mail[0].ID != n1.ID {
		t.Fatalf("mail %+v %v", mail, err)
	}
}

package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// twoWorkspaces makes two owners in separate workspaces, each with a project.
func twoWorkspaces(t *testing.T, st *store.Store) (a, b *store.Owner, pa, pb *store.Project) {
	t.Helper()
	ctx := context.Background()
	var err error
	a, err = st.CreateOwner(ctx, store.NewOwner{Email: "a@example.com", DisplayName: "A", Password: "long enough password", WorkspaceName: "A"})
	if err != nil {
		t.Fatal(err)
	}
	b, err = st.CreateOwner(ctx, store.NewOwner{Email: "b@example.com", DisplayName: "B", Password: "long enough password", WorkspaceName: "B"})
	if err != nil {
		t.Fatal(err)
	}
	if pa, err = st.CreateProject(ctx, a.WorkspaceID, "Alpha"); err != nil {
		t.Fatal(err)
	}
	if pb, err = st.CreateProject(ctx, b.WorkspaceID, "Beta"); err != nil {
		t.Fatal(err)
	}
	return
}

// sessionAndConnection makes a session of type typ in a's project p and an
// agent connection of a's workspace seated in no project.
func sessionAndConnection(t *testing.T, st *store.Store, a *store.Owner, p *store.Project, typ string) (*store.Session, *store.Connection) {
	t.Helper()
	ctx := context.Background()
	s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: a.WorkspaceID, ProjectID: p.ID, Type: typ, Title: "S"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: a.WorkspaceID, OwnerID: a.ID, ClientName: "c", Scopes: store.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	return s, conn
}

func TestCrossWorkspaceReadsAreNotFound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, b, pa, pb := twoWorkspaces(t, st)

	sa, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: a.WorkspaceID, ProjectID: pa.ID, Type: "agent_session", Title: "A's session"})
	if err != nil {
		t.Fatal(err)
	}
	conn, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: a.WorkspaceID, OwnerID: a.ID, ClientName: "c", Scopes: store.AllScopes, ProjectIDs: []int64{pa.ID}})
	if err != nil {
		t.Fatal(err)
	}

	checks := map[string]error{}
	_, checks["project"] = st.GetProject(ctx, b.WorkspaceID, pa.ID)
	_, checks["session"] = st.GetSession(ctx, b.WorkspaceID, sa.ID)
	_, checks["connection"] = st.GetConnection(ctx, b.WorkspaceID, conn.ID)
	checks["revoke"] = st.RevokeConnection(ctx, b.WorkspaceID, conn.ID)
	checks["seat in other workspace's project"] = st.SeatConnection(ctx, a.WorkspaceID, pb.ID, conn.ID)
	checks["seat by other workspace"] = st.SeatConnection(ctx, b.WorkspaceID, pa.ID, conn.ID)
	checks["invite by other workspace"] = st.Invite(ctx, b.WorkspaceID, sa.ID, conn.ID, store.RoleContributor)
	_, checks["session in other workspace's project"] = st.CreateSession(ctx, store.NewSession{WorkspaceID: a.WorkspaceID, ProjectID: pb.ID, Type: "team_session", Title: "x"})
	_, checks["connection seated in other workspace's project"] = st.CreateConnection(ctx, store.NewConnection{WorkspaceID: a.WorkspaceID, OwnerID: a.ID, ClientName: "c", Scopes: store.AllScopes, ProjectIDs: []int64{pb.ID}})
	for name, err := range checks {
		if !errors.Is(err, store.ErrNotFound) {
			t.Errorf("%s: want ErrNotFound, got %v", name, err)
		}
	}
	projects, err := st.ListProjects(ctx, b.WorkspaceID)
	if err != nil || len(projects) != 1 || projects[0].ID != pb.ID {
		t.Fatalf("B's projects: %+v %v", projects, err)
	}
	if _, err := st.GetConnection(ctx, a.WorkspaceID, conn.ID); err != nil {
		t.Fatalf("the owner's own read: %v", err)
	}
}

func TestAccessTokenLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, _, pa, _ := twoWorkspaces(t, st)
	const resource = "http://localhost:8080/mcp"
	conn, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: a.WorkspaceID, OwnerID: a.ID, ClientName: "c", Scopes: []string{store.ScopeRead}, ProjectIDs: []int64{pa.ID}})
	if err != nil {
		t.Fatal(err)
	}
	tok, _, err := st.MintAccessToken(ctx, conn.ID, resource, store.AllScopes, store.AccessTokenTTL)
	if err != nil {
		t.Fatal(err)
	}
	info, err := st.UseAccessToken(ctx, tok, resource)
	if err != nil {
		t.Fatal(err)
	}
	if info.ConnectionID != conn.ID || info.WorkspaceID != a.WorkspaceID || len(info.Scopes) != 1 || info.Scopes[0] != store.ScopeRead {
		t.Fatalf("token info %+v: scopes must be narrowed to the connection's", info)
	}
	if _, err := st.UseAccessToken(ctx, tok, "http://evil.example/mcp"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("other resource: %v", err)
	}
	if _, err := st.UseAccessToken(ctx, tok+"x", resource); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("garbage: %v", err)
	}
	expired, _, err := st.MintAccessToken(ctx, conn.ID, resource, store.AllScopes, -1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.UseAccessToken(ctx, expired, resource); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("expired: %v", err)
	}
	if err := st.RevokeConnection(ctx, a.WorkspaceID, conn.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := st.UseAccessToken(ctx, tok, resource); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("revoked: %v", err)
	}
	if _, _, err := st.MintAccessToken(ctx, conn.ID, resource, store.AllScopes, store.AccessTokenTTL); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("mint on revoked connection: %v", err)
	}
}

func TestEventsAreGapFree(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, _, pa, _ := twoWorkspaces(t, st)
	s, conn := sessionAndConnection(t, st, a, pa, "loop_session")
	if err := st.Invite(ctx, a.WorkspaceID, s.ID, conn.ID, "owner"); err == nil {
		t.Fatal("bad role accepted")
	}
	if err := st.Invite(ctx, a.WorkspaceID, s.ID, conn.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	if err := st.Invite(ctx, a.WorkspaceID, s.ID, conn.ID, store.RoleRunner); err != nil {
		t.Fatal(err)
	}
	role, err := st.InvitationRole(ctx, a.WorkspaceID, s.ID, conn.ID)
	if err != nil || role != store.RoleRunner {
		t.Fatalf("role %q %v", role, err)
	}
	if err := st.RemoveInvitation(ctx, a.WorkspaceID, s.ID, conn.ID); err != nil {
		t.Fatal(err)
	}
	var seqs []int64
	rows := storetest.SQL(t, st).Query(`SELECT sequence FROM resource_events WHERE session_id = $1 ORDER BY sequence`, s.ID)
	for rows.Next() {
		var v int64
		rows.Scan(&v)
		seqs = append(seqs, v)
	}
	if len(seqs) != 3 || seqs[0] != 1 || seqs[1] != 2 || seqs[2] != 3 {
		t.Fatalf("sequences %v, want [1 2 3] (the refused invite must not use a number)", seqs)
	}
}

package store_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestSeating runs every way a connection is seated in projects (a new
// connection, a static token from the CLI, an OAuth grant, the owner's seat
// by handle, a direct seat) through the same rule: repeated or already seated
// projects are harmless, and anything of another workspace is not found.
func TestSeating(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	a, b, pa, pb := twoWorkspaces(t, st)
	pa2, err := st.CreateProject(ctx, a.WorkspaceID, "Alpha two")
	if err != nil {
		t.Fatal(err)
	}
	seatsOf := func(t *testing.T, connectionID int64) []string {
		t.Helper()
		list, err := st.ListConnections(ctx, a.WorkspaceID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range list {
			if c.ID == connectionID {
				return c.Projects
			}
		}
		t.Fatalf("connection %d not listed", connectionID)
		return nil
	}
	newConnection := func(projects ...int64) (*store.Connection, error) {
		return st.CreateConnection(ctx, store.NewConnection{WorkspaceID: a.WorkspaceID, OwnerID: a.ID, ClientName: "c",
			Scopes: store.AllScopes, ProjectIDs: projects})
	}

	t.Run("new connection, repeated project", func(t *testing.T) {
		c, err := newConnection(pa.ID, pa.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got := seatsOf(t, c.ID); !slices.Equal(got, []string{"Alpha"}) {
			t.Fatalf("seated in %v", got)
		}
	})
	t.Run("new connection, another workspace's project", func(t *testing.T) {
		before, _ := st.ListConnections(ctx, a.WorkspaceID)
		_, err := newConnection(pa.ID, pb.ID)
		if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "project") {
			t.Fatalf("want a project not found, got %v", err)
		}
		if after, _ := st.ListConnections(ctx, a.WorkspaceID); len(after) != len(before) {
			t.Fatal("a connection was created although its seats were refused")
		}
	})
	t.Run("static token, repeated project name", func(t *testing.T) {
		// What `osfoundry token create --project Alpha --project Alpha` asks for.
		tok, err := st.CreateStaticToken(ctx, store.StaticTokenRequest{OwnerEmail: a.Email, ClientName: "cli",
			Scopes: store.AllScopes, ProjectNames: []string{"Alpha", "Alpha"}, Resource: testResource})
		if err != nil {
			t.Fatal(err)
		}
		if got := seatsOf(t, tok.ConnectionID); !slices.Equal(got, []string{"Alpha"}) {
			t.Fatalf("seated in %v", got)
		}
	})
	t.Run("OAuth grant, repeated and added projects", func(t *testing.T) {
		clientID := "seat-client"
		if err := st.CreateOAuthClient(ctx, &store.OAuthClient{ClientID: clientID, ClientName: "Client",
			RedirectURIs: []string{"http://localhost/cb"}, TokenEndpointAuthMethod: store.AuthMethodNone}, "test"); err != nil {
			t.Fatal(err)
		}
		var continued int64
		grant := func(projects ...int64) (*store.Connection, error) {
			return st.GrantConnection(ctx, store.NewConnection{WorkspaceID: a.WorkspaceID, OwnerID: a.ID, ClientID: &clientID,
				ClientName: "Client", Scopes: store.AllScopes, ProjectIDs: projects, Continue: continued})
		}
		first, err := grant(pa.ID, pa.ID)
		if err != nil {
			t.Fatal(err)
		}
		continued = first.ID // the owner chose "Sign in again as" it
		again, err := grant(pa.ID, pa2.ID)
		if err != nil || again.ID != first.ID {
			t.Fatalf("re-grant: %+v %v", again, err)
		}
		if got := seatsOf(t, first.ID); !slices.Equal(got, []string{"Alpha", "Alpha two"}) {
			t.Fatalf("seated in %v", got)
		}
		if _, err := grant(pb.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("grant with another workspace's project: %v", err)
		}
	})
	t.Run("direct seat", func(t *testing.T) {
		c, err := newConnection()
		if err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := st.SeatConnection(ctx, a.WorkspaceID, pa2.ID, c.ID); err != nil {
				t.Fatal(err)
			}
		}
		if got := seatsOf(t, c.ID); !slices.Equal(got, []string{"Alpha two"}) {
			t.Fatalf("seated in %v", got)
		}
		if err := st.RevokeConnection(ctx, a.WorkspaceID, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := st.SeatConnection(ctx, a.WorkspaceID, pa.ID, c.ID); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("seat of a revoked connection: %v", err)
		}
	})
	t.Run("seat by handle", func(t *testing.T) {
		c, err := newConnection()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := st.ClaimProfile(ctx, a.WorkspaceID, c.ID, "seated", "Seated"); err != nil {
			t.Fatal(err)
		}
		for _, h := range []string{"seated", " @Seated "} {
			if err := st.SeatAgentByHandle(ctx, a.WorkspaceID, pa.ID, h); err != nil {
				t.Fatalf("%q: %v", h, err)
			}
		}
		if got := seatsOf(t, c.ID); !slices.Equal(got, []string{"Alpha"}) {
			t.Fatalf("seated in %v", got)
		}
		var fe *store.FieldError
		if err := st.SeatAgentByHandle(ctx, a.WorkspaceID, pa.ID, "nobody"); !errors.As(err, &fe) || fe.Field != "handle" {
			t.Fatalf("unknown handle: %v", err)
		}
		if err := st.SeatAgentByHandle(ctx, a.WorkspaceID, pb.ID, "nobody"); !errors.Is(err, store.ErrNotFound) {
			t.Fatalf("another workspace's project, unknown handle: %v", err)
		}
		if err := st.SeatAgentByHandle(ctx, b.WorkspaceID, pb.ID, "seated"); !errors.As(err, &fe) || fe.Field != "handle" {
			t.Fatalf("another workspace's agent: %v", err)
		}
		if err := st.RevokeConnection(ctx, a.WorkspaceID, c.ID); err != nil {
			t.Fatal(err)
		}
		if err := st.SeatAgentByHandle(ctx, a.WorkspaceID, pa2.ID, "seated"); !errors.As(err, &fe) || fe.Field != "handle" {
			t.Fatalf("revoked agent: %v", err)
		}
	})
}

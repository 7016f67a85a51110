package store_test

import (
	"context"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// BenchmarkCheckedCall is a read tool's database work, list_agents, with
// its token's check two ways: sent with the call's statement through
// AsCaller (one round trip), and run before it (UseAccessToken, two):
//
//	go test -run '^$' -bench CheckedCall ./store/
func BenchmarkCheckedCall(b *testing.B) {
	ctx := context.Background()
	st := storetest.New(b)
	db := storetest.SQL(b, st)
	ws, owner := db.InsertWorkspace("W")
	const resource = "http://localhost:8080/mcp"
	conn, token, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner, ClientName: "c",
		Scopes: store.AllScopes}, resource, time.Hour)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("with the statement", func(b *testing.B) {
		for b.Loop() {
			check := st.NewTokenCheck(token, resource, store.ScopeRead, true)
			if _, err := st.AsCaller(check).ListAgents(ctx, ws, conn.ID); err != nil {
				b.Fatal(err)
			}
			if _, err := check.Result(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("before the statement", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.UseAccessToken(ctx, token, resource); err != nil {
				b.Fatal(err)
			}
			if _, err := st.ListAgents(ctx, ws, conn.ID); err != nil {
				b.Fatal(err)
			}
		}
	})
}

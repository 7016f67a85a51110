package store_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// BenchmarkCheckedCall is a read tool's database work, list_agents, with
// its token's check sent with the statement through AsCaller (one round
// trip) and, alternately in the same loop so that a noisy moment hits both,
// run before it (UseAccessToken, two): the medians of each, in ms.
//
//	go test -run '^$' -bench CheckedCall -benchtime 400x ./store/
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
	var with, before []time.Duration
	for b.Loop() {
		start := time.Now()
		check := st.NewTokenCheck(token, resource, store.ScopeRead, true)
		if _, err := st.AsCaller(check).ListAgents(ctx, ws, conn.ID); err != nil {
			b.Fatal(err)
		}
		if _, err := check.Result(ctx); err != nil {
			b.Fatal(err)
		}
		with = append(with, time.Since(start))
		start = time.Now()
		if _, err := st.UseAccessToken(ctx, token, resource); err != nil {
			b.Fatal(err)
		}
		if _, err := st.ListAgents(ctx, ws, conn.ID); err != nil {
			b.Fatal(err)
		}
		before = append(before, time.Since(start))
	}
	median := func(d []time.Duration) float64 {
		slices.Sort(d)
		return float64(d[len(d)/2].Microseconds()) / 1000
	}
	b.ReportMetric(median(with), "ms-with-the-statement")
	b.ReportMetric(median(before), "ms-before-the-statement")
}

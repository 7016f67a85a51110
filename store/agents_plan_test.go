package store_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// connectionsNode is a node of EXPLAIN ANALYZE's text that reads connections.
var connectionsNode = regexp.MustCompile(`\bon connections\b[^(]*\(actual rows=(\d+) loops=(\d+)\)`)

// TestListAgentsReadsItsWorkspace: list_agents of a workspace of three
// agents reads their connections, not the 3,000 of another workspace, and
// evaluates whether each shares a project with the caller once, also in
// the generic plan.
func TestListAgentsReadsItsWorkspace(t *testing.T) {
	t.Parallel()
	st, ws, owner, p := agentWorld(t)
	ctx := context.Background()
	db := storetest.SQL(t, st)
	other, otherOwner := db.InsertWorkspace("other")
	db.Exec(`
		INSERT INTO connections (workspace_id, owner_id, client_name, scopes)
		SELECT $1, $2, 'c', '{osfoundry:read}' FROM generate_series(1, 3000)`, other, otherOwner)
	var ids []int64
	for _, h := range []string{"ada", "bob", "cy"} {
		c := newConn(t, st, ws, owner, p)
		if _, err := st.ClaimProfile(ctx, ws, c.ID, h, h); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	agents, err := st.ListAgents(ctx, ws, ids[0])
	if err != nil || len(agents) != 3 {
		t.Fatalf("%d agents, %v", len(agents), err)
	}
	db.Exec(`VACUUM ANALYZE`)
	tx := db.Begin()
	defer tx.Rollback(ctx)
	plan := genericPlan(t, tx, store.ListAgentsSQL, ws, ids[0])
	if n := nodeRowsRead(plan, connectionsNode); n > 10 {
		t.Fatalf("read %d connections for 3 agents:\n%s", n, plan)
	}
	if n := strings.Count(plan, "SubPlan"); n > 1 {
		t.Fatalf("%d subplans for whether an agent shares a project:\n%s", n, plan)
	}
}

package testfactory_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/testfactory"
)

// TestEveryPhysicalStatementRunsOnTheSchema: each tool's physical statement
// runs twice on the schema as it is and returns its rows (the retry's second
// call writes nothing).
func TestEveryPhysicalStatementRunsOnTheSchema(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, pool := openStore(t)
	owner, err := st.CreateOwner(ctx, store.NewOwner{Email: "physical@example.com", DisplayName: "Physical owner", Password: "a fixture password", WorkspaceName: "physical"})
	if err != nil {
		t.Fatal(err)
	}
	ws := owner.WorkspaceID
	project, err := st.CreateProject(ctx, ws, "Physical")
	if err != nil {
		t.Fatal(err)
	}
	var sessions []*store.Session
	for _, title := range []string{"Mail", "Physical"} {
		s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: project.ID, Type: "team_session", Title: title, CreatedBy: owner.ID})
		if err != nil {
			t.Fatal(err)
		}
		sessions = append(sessions, s)
	}
	mail, physical := sessions[0], sessions[1]
	conn, _, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner.ID,
		ClientName: "physical", Scopes: store.AllScopes, ProjectIDs: []int64{project.ID}}, "http://localhost/mcp", time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.ClaimProfile(ctx, ws, conn.ID, "physical-0", "Physical agent 0")
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Invite(ctx, ws, mail.ID, conn.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if _, _, err := st.PostAgentNote(ctx, store.AgentNote{WorkspaceID: ws, ConnectionID: conn.ID, SessionType: mail.Type, SessionID: mail.PublicID,
			Subject: "Seed", Body: "Seed body", IdempotencyKey: fmt.Sprintf("seed-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	mine := testfactory.PhysicalArgs{Workspace: ws, Session: mail.ID, Connection: conn.ID}
	write := func(i int, to, key string) testfactory.PhysicalArgs {
		return testfactory.PhysicalArgs{Workspace: ws, Session: physical.ID, Connection: conn.ID, Slug: p.SenderSlug, To: to, Text: fmt.Sprintf("Text %d", i), Key: key}
	}
	for _, tc := range []struct {
		tool string
		args func(i int) testfactory.PhysicalArgs
		rows [2]int
	}{
		{"set_status", func(i int) testfactory.PhysicalArgs { a := mine; a.Text = fmt.Sprintf("step %d", i); return a }, [2]int{1, 1}},
		{"post_session_note", func(i int) testfactory.PhysicalArgs { return write(i, "", fmt.Sprintf("note-%d", i)) }, [2]int{1, 1}},
		{"post_session_note retry", func(int) testfactory.PhysicalArgs { return write(0, "", "retry") }, [2]int{1, 0}},
		{"reply_to_sender", func(i int) testfactory.PhysicalArgs {
			return write(i, store.OwnerSlug(owner.ID), fmt.Sprintf("reply-%d", i))
		}, [2]int{1, 1}},
		{"claim_connected_profile", func(i int) testfactory.PhysicalArgs { a := mine; a.Text = fmt.Sprintf("Agent %d", i); return a }, [2]int{1, 1}},
		{"read_session_mail", func(int) testfactory.PhysicalArgs { return mine }, [2]int{10, 10}},
		{"list_agents", func(int) testfactory.PhysicalArgs { return mine }, [2]int{1, 1}},
		{"list_sessions", func(int) testfactory.PhysicalArgs { return mine }, [2]int{1, 1}},
		{"read_session_state", func(int) testfactory.PhysicalArgs { return mine }, [2]int{1, 1}},
		{"poll_resource_events", func(int) testfactory.PhysicalArgs { return mine }, [2]int{10, 10}},
	} {
		for i := range 2 {
			rows, err := testfactory.RunPhysical(ctx, pool, tc.tool, tc.args(i))
			if err != nil {
				t.Errorf("%s, call %d: %v", tc.tool, i, err)
			} else if len(rows) != tc.rows[i] {
				t.Errorf("%s, call %d: %d rows, want %d", tc.tool, i, len(rows), tc.rows[i])
			}
		}
	}
	if _, err := testfactory.RunPhysical(ctx, pool, "no_such_tool", mine); err == nil {
		t.Error("a tool without a physical statement ran")
	}
}

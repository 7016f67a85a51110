package store_test

import (
	"context"
	"fmt"
	"os"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// tokenCheckBefore is the token check every tools/call ran before it also
// counted unread mail: the baseline of TestUnreadCost.
const tokenCheckBefore = `
	WITH t AS (
		SELECT c.id, c.workspace_id, c.owner_id, t.scopes, t.expires_at, t.resource, c.last_seen_at
		FROM access_tokens t JOIN connections c ON c.id = t.connection_id
		WHERE t.token_hash = $1 AND t.expires_at > now() AND c.revoked_at IS NULL AND t.resource = $2
	), seen AS (
		UPDATE connections c SET last_seen_at = now()
		FROM t WHERE c.id = t.id AND (t.last_seen_at IS NULL OR t.last_seen_at < now() - make_interval(secs => $3))
	)
	SELECT id, workspace_id, owner_id, scopes, expires_at, resource FROM t`

var (
	executionTime = regexp.MustCompile(`Execution Time: ([0-9.]+) ms`)
	planningTime  = regexp.MustCompile(`Planning Time: ([0-9.]+) ms`)
)

// timeCalls runs call 300 times and words the round trips: median and 90th
// percentile (the machine is shared, so the mean says little).
func timeCalls(t *testing.T, call func() error) string {
	t.Helper()
	const calls = 300
	took := make([]time.Duration, calls)
	for i := range calls {
		start := time.Now()
		if err := call(); err != nil {
			t.Fatal(err)
		}
		took[i] = time.Since(start)
	}
	slices.Sort(took)
	return fmt.Sprintf("round trip median %v, p90 %v over %d calls",
		took[calls/2].Round(time.Microsecond), took[calls*9/10].Round(time.Microsecond), calls)
}

// TestUnreadCost measures what counting unread mail adds to the statement
// every tools/call runs to verify its token. The agent is invited to 50
// sessions of 200 notes each (a quarter of them owners' notes to the whole
// session, the rest another agent's). For each state of its reading it logs
// the round trips of the statement (median and 90th percentile) and the
// planning and execution times EXPLAIN ANALYZE reports, beside the statement as it was before.
// Figures for the report, not assertions: run with -v (UNREAD_PLANS=1 also
// logs each plan); skipped with -short. The tables are vacuumed, as autovacuum
// would have them, so that index-only scans can skip the heap.
func TestUnreadCost(t *testing.T) {
	if testing.Short() {
		t.Skip("measurement")
	}
	ctx := context.Background()
	st := storetest.New(t)
	db := storetest.SQL(t, st)
	ws, owner := db.InsertWorkspace("W")
	p, err := st.CreateProject(ctx, ws, "P")
	if err != nil {
		t.Fatal(err)
	}
	const resource = "http://localhost:8080/mcp"
	conn, token, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner, ClientName: "c",
		Scopes: store.AllScopes, ProjectIDs: []int64{p.ID}}, resource, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	other, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner, ClientName: "o", Scopes: store.AllScopes})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		id     int64
		handle string
	}{{conn.ID, "reader"}, {other.ID, "writer"}} {
		if _, err := st.ClaimProfile(ctx, ws, c.id, c.handle, c.handle); err != nil {
			t.Fatal(err)
		}
	}
	const sessions, perSession = 50, 200
	var ids []int64
	for range sessions {
		s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: p.ID, Type: "team_session", Title: "S"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.Invite(ctx, ws, s.ID, conn.ID, store.RoleContributor); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, s.ID)
	}
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, s, CASE WHEN g % 4 = 0 THEN 'owner' ELSE 'agent' END,
			CASE WHEN g % 4 = 0 THEN $2::bigint END, CASE WHEN g % 4 <> 0 THEN $3::bigint END,
			CASE WHEN g % 4 = 0 THEN owner_slug($2::bigint) ELSE 'ext-writer' END, 'N', 'note', 'subject', 'body'
		FROM generate_series(1, $5::int) g CROSS JOIN unnest($4::bigint[]) s
		ORDER BY g, s`, ws, owner, other.ID, ids, perSession)
	db.Exec(`VACUUM ANALYZE`)
	hash := store.HashToken(token)
	interval := store.PresenceWriteInterval.Seconds()

	measure := func(state, sql string) {
		t.Helper()
		took := timeCalls(t, func() error {
			rows := db.Query(sql, hash, resource, interval)
			rows.Close()
			return rows.Err()
		})
		plan := planOf(t, db.Query(`EXPLAIN (ANALYZE, BUFFERS) `+sql, hash, resource, interval))
		exec, planning := "?", "?"
		if m := executionTime.FindStringSubmatch(plan); m != nil {
			exec = m[1] + " ms"
		}
		if m := planningTime.FindStringSubmatch(plan); m != nil {
			planning = m[1] + " ms"
		}
		ti, err := st.UseAccessToken(ctx, token, resource)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-42s %s; EXPLAIN ANALYZE: planning %s, execution %s; unread %d in %d sessions",
			state, took, planning, exec, ti.Unread.Total, ti.Unread.SessionCount)
		if testing.Verbose() && os.Getenv("UNREAD_PLANS") != "" {
			t.Logf("plan:\n%s", plan)
		}
	}

	measure("before: the token check alone", tokenCheckBefore)
	measure("never read (2,500 unread of 10,000 notes)", store.UseAccessTokenSQL)
	// What read_session_mail leaves after reading every session to the end.
	db.Exec(`
		INSERT INTO agent_mail_reads (session_id, connection_id, read_through)
		SELECT s.id, $1, (SELECT max(n.id) FROM notes n WHERE n.session_id = s.id) FROM unnest($2::bigint[]) s(id)`, conn.ID, ids)
	db.Exec(`
		INSERT INTO note_receipts (note_id, connection_id, session_id, owner_note)
		SELECT n.id, $1, n.session_id, n.sender_kind = 'owner' FROM notes n WHERE n.session_id = ANY($2) AND n.sender_connection_id IS DISTINCT FROM $1`, conn.ID, ids)
	db.Exec(`VACUUM ANALYZE`)
	measure("caught up", store.UseAccessTokenSQL)
	for i := range 5 {
		db.Exec(`INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
			VALUES ($1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'N', 'note', 's', 'b')`, ws, ids[i*7], owner)
	}
	measure("caught up, then 5 new notes in 5 sessions", store.UseAccessTokenSQL)
	measure("before, same data", tokenCheckBefore)
	if ti, err := st.UseAccessToken(ctx, token, resource); err != nil || ti.Unread.Total != 5 || ti.Unread.SessionCount != 5 {
		t.Fatalf("unread %+v %v", ti.Unread, err)
	}

	// read_session_mail of one session, caught up (nothing new to record),
	// beside the statement as it was before receipts and the hint.
	s0, err := st.GetSession(ctx, ws, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		state string
		read  func() error
	}{
		{"read_session_mail before", func() error {
			rows := db.Query(readMailBefore, ws, conn.ID, s0.Type, s0.PublicID, 0, 11)
			rows.Close()
			return rows.Err()
		}},
		{"read_session_mail now", func() error {
			_, _, err := st.ReadAgentMail(ctx, ws, conn.ID, s0.Type, s0.PublicID, 0, 10)
			return err
		}},
	} {
		t.Logf("%-42s %s", c.state, timeCalls(t, c.read))
	}
}

// readMailBefore is read_session_mail's statement before it recorded
// receipts and counted unread mail.
const readMailBefore = `
	WITH target AS (
		SELECT s.id, i.role
		FROM sessions s
		LEFT JOIN invitations i ON i.session_id = s.id AND i.connection_id = $2
		WHERE s.workspace_id = $1 AND s.session_type = $3 AND s.public_id = $4
	)
	SELECT target.role, n.*
	FROM target
	LEFT JOIN LATERAL (
		SELECT * FROM notes n
		WHERE target.role IS NOT NULL AND n.session_id = target.id AND n.message_type <> 'analysis'
			AND (n.recipient_slug IS NULL
				OR n.recipient_slug = (SELECT sender_slug FROM connections WHERE id = $2)
				OR n.sender_connection_id = $2)
			AND ($5 = 0 OR n.id < $5)
		ORDER BY n.session_id, n.id DESC
		LIMIT $6
	) n ON true
	ORDER BY n.id DESC`

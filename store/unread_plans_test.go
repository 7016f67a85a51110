package store_test

import (
	"context"
	"math"
	"regexp"
	"strconv"
	"testing"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// invitedFixture is a mailFixture whose agent is invited to 50 sessions of
// 400 notes each, every other one an owner's note to the whole session (200
// addressed to the agent per session, 10,000 in all), beside 3,000 empty
// sessions of the server; the notes are all-visible, as autovacuum leaves
// them.
func invitedFixture(t *testing.T) (*mailFixture, *storetest.Fixtures) {
	t.Helper()
	f := newMailFixture(t)
	ws := f.owner.WorkspaceID
	db := storetest.SQL(t, f.st)
	db.Exec(`
		INSERT INTO sessions (workspace_id, project_id, session_type, public_id, title)
		SELECT $1, $2, 'team_session', 'other-' || i, 'Other' FROM generate_series(1, 3049) i`, ws, f.sess.ProjectID)
	db.Exec(`
		INSERT INTO invitations (workspace_id, session_id, connection_id, role)
		SELECT $1, s.id, $2, 'contributor' FROM sessions s WHERE s.public_id LIKE 'other-%' ORDER BY s.id LIMIT 49`, ws, f.connID)
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id, sender_slug, sender_name,
			message_type, subject, body)
		SELECT $1, i.session_id, CASE WHEN g % 2 = 0 THEN 'owner' ELSE 'agent' END,
			CASE WHEN g % 2 = 0 THEN $2::bigint END, CASE WHEN g % 2 = 1 THEN $3::bigint END,
			CASE WHEN g % 2 = 0 THEN owner_slug($2::bigint) ELSE 'ada' END, 'N', 'note', 's', 'b'
		FROM generate_series(1, 400) g CROSS JOIN invitations i WHERE i.connection_id = $3
		ORDER BY g, i.session_id`, ws, f.owner.ID, f.connID)
	allVisible(t, db)
	return f, db
}

// allVisible vacuums until every page of notes is all-visible: a VACUUM
// that runs beside autovacuum's ANALYZE of the fresh rows may leave them
// not yet visible to all, and the plans depend on it.
func allVisible(t testing.TB, db *storetest.Fixtures) {
	t.Helper()
	for range 20 {
		db.Exec(`VACUUM ANALYZE`)
		var pages, visible int
		if err := db.QueryRow(`SELECT relpages, relallvisible FROM pg_class WHERE relname = 'notes'`).Scan(&pages, &visible); err != nil {
			t.Fatal(err)
		}
		if visible >= pages {
			return
		}
	}
	t.Fatal("notes never all-visible")
}

// sessionRows counts the rows a plan read of sessions, over all loops.
var sessionNode = regexp.MustCompile(`\bon sessions\b[^(]*\(actual rows=(\d+) loops=(\d+)\)`)

func sessionRows(plan string) int {
	total := 0
	for _, m := range sessionNode.FindAllStringSubmatch(plan, -1) {
		rows, _ := strconv.Atoi(m[1])
		loops, _ := strconv.Atoi(m[2])
		total += rows * loops
	}
	return total
}

// TestUnreadHintReadsNeitherBacklogNorEverySession: the unread hint of an
// agent invited to 50 sessions, 10,000 notes addressed to it unread, reads
// one index entry per invitation and MaxUnreadCounted+1 besides, not 101 per
// session nor the backlog, and looks up only the listed sessions, in the
// token check of every call, in CountUnread and in read_session_mail; caught
// up, it reads no note at all. The hint stops at the cap.
func TestUnreadHintReadsNeitherBacklogNorEverySession(t *testing.T) {
	t.Parallel()
	f, db := invitedFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	const resource = "http://localhost:8080/mcp"
	token, _, err := f.st.MintAccessToken(ctx, f.connID, resource, store.AllScopes, 3600e9)
	if err != nil {
		t.Fatal(err)
	}
	hash := store.HashToken(token)
	statements := []struct {
		name     string
		sql      string
		args     []any
		sessions int // rows of sessions besides the listed ones
		notes    int // rows of notes and receipts besides the hint's
	}{
		{"first token check", store.UseAccessTokenSQL, []any{hash, resource, 60.0}, 0, 0},
		{"token check", store.TokenCheckSQL, []any{hash, resource, 60.0, store.AllScopes[0]}, 0, 0},
		{"count unread", store.CountUnreadSQL, []any{f.connID}, 0, 0},
		// The session's row twice (found, locked), and a page of 20 notes with their receipts.
		{"read_session_mail", store.ReadAgentMailSQL, []any{ws, f.connID, f.sess.Type, f.sess.PublicID, int64(math.MaxInt64), 20, store.ReceiptsChannel},
			2, 4 * (store.MaxMailPage + 1)},
	}
	check := func(t *testing.T, hint int) {
		for _, c := range statements {
			t.Run(c.name, func(t *testing.T) {
				tx := db.Begin()
				defer tx.Rollback(ctx)
				plan := genericPlan(t, tx, c.sql, c.args...)
				if n := rowsRead(plan); n > hint+c.notes {
					t.Fatalf("read %d rows of notes and receipts, want at most %d:\n%s", n, hint+c.notes, plan)
				}
				if n := sessionRows(plan); n > store.MaxUnreadListed+c.sessions {
					t.Fatalf("read %d rows of sessions:\n%s", n, plan)
				}
			})
		}
	}
	t.Run("far behind", func(t *testing.T) {
		check(t, 50+store.MaxUnreadCounted+1)
	})
	u, err := f.st.CountUnread(ctx, f.connID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Total != store.MaxUnreadCounted || !u.More || u.SessionCount != 50 || len(u.Sessions) != store.MaxUnreadListed {
		t.Fatalf("far behind: %+v", u)
	}
	db.Exec(`
		INSERT INTO agent_mail_reads (session_id, connection_id, read_through)
		SELECT i.session_id, $1, (SELECT max(n.id) FROM notes n WHERE n.session_id = i.session_id) FROM invitations i WHERE i.connection_id = $1`, f.connID)
	allVisible(t, db)
	t.Run("caught up", func(t *testing.T) {
		check(t, 0)
	})
}

package store_test

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// grownFixture is a mailFixture whose session is busy — 20,000 notes, one
// in ten the owner's, each of those read (a receipt) by the agent, read
// marks near the top — beside 20 quiet sessions of the same project (and
// 3,000 empty ones): what
// the owner's pages and the mail poll must read a few rows of, however busy
// a session grows.
func grownFixture(t *testing.T) (*mailFixture, *storetest.Fixtures) {
	t.Helper()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	var quiet []int64
	for i := range 20 {
		s, err := f.st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: f.sess.ProjectID, Type: "team_session", Title: "Quiet " + strconv.Itoa(i)})
		if err != nil {
			t.Fatal(err)
		}
		quiet = append(quiet, s.ID)
	}
	db := storetest.SQL(t, f.st)
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id, sender_slug, sender_name,
			message_type, subject, body, created_at)
		SELECT $1, $2, CASE WHEN i % 10 = 0 THEN 'owner' ELSE 'agent' END,
			CASE WHEN i % 10 = 0 THEN $3::bigint END, CASE WHEN i % 10 = 0 THEN NULL ELSE $4::bigint END,
			CASE WHEN i % 10 = 0 THEN owner_slug($3::bigint) ELSE 'ada' END, 'N', 'note', 's' || i, 'b',
			now() - (20000 - i) * interval '1 second'
		FROM generate_series(1, 20000) i`, ws, f.sess.ID, f.owner.ID, f.connID)
	db.Exec(`
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body)
		SELECT $1, s, 'agent', $2::bigint, 'ada', 'N', 'note', 's', 'b' FROM unnest($3::bigint[]) s, generate_series(1, 3)`, ws, f.connID, quiet)
	db.Exec(`
		INSERT INTO note_receipts (note_id, connection_id, session_id, owner_note)
		SELECT n.id, $2, n.session_id, true FROM notes n WHERE n.session_id = $1 AND n.sender_kind = 'owner'`, f.sess.ID, f.connID)
	db.Exec(`
		INSERT INTO note_reads (owner_id, session_id, last_read_note_id)
		SELECT $1, s.id, (SELECT max(n.id) - 5 FROM notes n WHERE n.session_id = s.id) FROM sessions s WHERE s.workspace_id = $2`, f.owner.ID, ws)
	db.Exec(`
		INSERT INTO agent_mail_reads (session_id, connection_id, read_through)
		SELECT $1, $2, max(n.id) - 5 FROM notes n WHERE n.session_id = $1`, f.sess.ID, f.connID)
	// And the other 3,000 sessions of a server.
	db.Exec(`
		INSERT INTO sessions (workspace_id, project_id, session_type, public_id, title)
		SELECT $1, $2, 'team_session', 'other-' || i, 'Other' FROM generate_series(1, 3000) i`, ws, f.sess.ProjectID)
	db.Exec(`VACUUM ANALYZE`)
	return f, db
}

// mailNode is a node of EXPLAIN ANALYZE's text that reads a table of the
// mail, with its rows and loops.
var mailNode = regexp.MustCompile(`\bon (notes|note_receipts)\b[^(]*\(actual rows=(\d+) loops=(\d+)\)`)

// removedRows are the rows a node read and dropped, per loop.
var removedRows = regexp.MustCompile(`Rows Removed by [A-Za-z ]+: (\d+)`)

// rowsRead sums what the plan's nodes over notes and note_receipts read:
// the rows each returned and those it dropped, over all its loops.
func rowsRead(plan string) int { return nodeRowsRead(plan, mailNode) }

// nodeRowsRead sums what the plan's nodes that node matches (its groups:
// rows, loops) read, the rows each returned and those it dropped, over all
// its loops.
func nodeRowsRead(plan string, node *regexp.Regexp) int {
	total, loops := 0, 0
	for _, line := range strings.Split(plan, "\n") {
		if m := node.FindStringSubmatch(line); m != nil {
			rows, _ := strconv.Atoi(m[len(m)-2])
			loops, _ = strconv.Atoi(m[len(m)-1])
			total += rows * loops
			continue
		}
		if strings.Contains(line, "->") {
			loops = 0
		}
		if m := removedRows.FindStringSubmatch(line); m != nil && loops > 0 {
			n, _ := strconv.Atoi(m[1])
			total += n * loops
		}
	}
	return total
}

// TestOwnerPagesReadFewNotes: in a session of 20,000 notes, the statements
// of the projects list, a project's sessions list, the unread counts, the
// mail poll's marks and receipts, an owner's duplicate check and the unread
// hint of an agent that never read the session each read
// a few dozen rows of notes and receipts, not the session's mail, also in
// a generic plan (the one prepared statements settle on): the newest note
// is the largest id of the session's index, read marks and receipts are
// index bounds, the duplicate check a range of the owner's recent notes.
func TestOwnerPagesReadFewNotes(t *testing.T) {
	t.Parallel()
	f, db := grownFixture(t)
	ctx := context.Background()
	ws, owner := f.owner.WorkspaceID, f.owner.ID
	// An agent that never read the busy session: 2,000 owners' notes wait.
	far, err := f.st.CreateConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner, ClientName: "far",
		Scopes: store.AllScopes, ProjectIDs: []int64{f.sess.ProjectID}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.st.Invite(ctx, ws, f.sess.ID, far.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	// And to 49 other sessions, as busy agents are.
	db.Exec(`
		INSERT INTO invitations (workspace_id, session_id, connection_id, role)
		SELECT $1, s.id, $2, 'contributor' FROM sessions s WHERE s.public_id LIKE 'other-%' ORDER BY s.id LIMIT 49`, ws, far.ID)
	db.Exec(`ANALYZE invitations`)
	for _, c := range []struct {
		name string
		sql  string
		args []any
	}{
		{"projects list", store.ListProjectSummariesSQL, []any{ws, owner}},
		{"project's sessions", store.ListSessionSummariesSQL, []any{ws, f.sess.ProjectID, owner}},
		{"unread counts", store.UnreadMailSQL, []any{ws, owner}},
		{"unread counts of a session", store.UnreadMailInSQL, []any{[]int64{owner}, []int64{f.sess.ID}}},
		{"mail marks", store.SessionMailMarksSQL, []any{f.sess.ID}},
		{"receipts after", store.ReceiptsAfterSQL, []any{ws, f.sess.ID, int64(1990)}},
		{"far-behind agent's unread count", store.CountUnreadSQL, []any{far.ID}},
		{"owner's duplicate check", store.DuplicateOwnerNoteSQL, []any{f.sess.ID, owner, "note", nil, "new", "b", "10 seconds", nil}},
	} {
		t.Run(c.name, func(t *testing.T) {
			tx := db.Begin()
			defer tx.Rollback(ctx)
			plan := genericPlan(t, tx, c.sql, c.args...)
			if n := rowsRead(plan); n > 200 {
				t.Fatalf("read %d rows of notes and receipts:\n%s", n, plan)
			}
		})
	}
}

// TestOwnerCountsStopAtTheCap: an owner who never opened the busy session
// (20,000 notes unread) has its counts on the projects list, the project's
// sessions list and the unread stream read at most MaxUnreadCounted index
// entries per session, index-only (no heap fetch of notes), and a few
// hundred blocks in all, not the session's backlog; the counts stop at the
// cap.
func TestOwnerCountsStopAtTheCap(t *testing.T) {
	t.Parallel()
	f, db := grownFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	behind := db.InsertOwner(ws, "Behind")
	db.Exec(`VACUUM ANALYZE notes`)
	explain := func(sql string, args ...any) string {
		t.Helper()
		tx := db.Begin()
		defer tx.Rollback(ctx)
		return genericPlan(t, tx, sql, args...)
	}
	for _, c := range []struct {
		name string
		sql  string
		args func(owner int64) []any
	}{
		{"projects list", store.ListProjectSummariesSQL, func(o int64) []any { return []any{ws, o} }},
		{"project's sessions", store.ListSessionSummariesSQL, func(o int64) []any { return []any{ws, f.sess.ProjectID, o} }},
		{"unread counts", store.UnreadMailSQL, func(o int64) []any { return []any{ws, o} }},
		{"unread counts of a session", store.UnreadMailInSQL, func(o int64) []any { return []any{[]int64{o}, []int64{f.sess.ID}} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := explain(c.sql, c.args(behind)...)
			// At most the busy session's capped counts and the three notes
			// of each of the 20 quiet sessions, twice (all, and the
			// inbox's), and a probe of each.
			if n := rowsRead(plan); n > 2*(store.MaxUnreadCounted+20*3)+2*21 {
				t.Fatalf("read %d rows of notes:\n%s", n, plan)
			}
			if heapFetches.MatchString(plan) {
				t.Fatalf("fetched notes from the heap:\n%s", plan)
			}
			// What the backlog adds to the blocks the statement reads for
			// an owner who keeps up (a few per session, for the 3,021).
			kept := blocksRead(explain(c.sql, c.args(f.owner.ID)...))
			if n := blocksRead(plan); n > kept+100 {
				t.Fatalf("read %d blocks, %d for an owner who keeps up:\n%s", n, kept, plan)
			}
		})
	}
	u, err := f.st.UnreadMail(ctx, ws, behind)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range u {
		if r.SessionID == f.sess.ID && (r.Unread != store.MaxUnreadCounted || r.Inbox != store.MaxUnreadCounted) {
			t.Fatalf("busy session counted %+v", r)
		}
		if r.SessionID != f.sess.ID && r.Unread != 3 {
			t.Fatalf("quiet session counted %+v", r)
		}
	}
	if len(u) != 21 {
		t.Fatalf("%d sessions counted", len(u))
	}
}

// heapFetches is an index-only scan that still went to the heap.
var heapFetches = regexp.MustCompile(`Heap Fetches: [1-9]`)

// topBuffers is the first Buffers line of a plan: the whole statement's.
var topBuffers = regexp.MustCompile(`Buffers: shared(?: hit=(\d+))?(?: read=(\d+))?`)

// blocksRead is how many blocks the whole statement read, from shared
// buffers or not.
func blocksRead(plan string) int {
	m := topBuffers.FindStringSubmatch(plan)
	if m == nil {
		return 0
	}
	hit, _ := strconv.Atoi(m[1])
	read, _ := strconv.Atoi(m[2])
	return hit + read
}

// TestUnreadCountStops: a connection far behind in a session has its count
// stop at MaxUnreadCounted, with More, so that counting costs the same
// however far behind it is; a count below the cap is exact.
func TestUnreadCountStops(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	db := storetest.SQL(t, f.st)
	add := func(n int) {
		db.Exec(`
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
			SELECT $1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'O', 'note', 's', 'b' FROM generate_series(1, $4::int)`,
			f.owner.WorkspaceID, f.sess.ID, f.owner.ID, n)
	}
	add(store.MaxUnreadCounted)
	u, err := f.st.CountUnread(ctx, f.connID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Total != store.MaxUnreadCounted || u.More || len(u.Sessions) != 1 || u.Sessions[0].Count != store.MaxUnreadCounted || u.Sessions[0].More {
		t.Fatalf("at the cap: %+v", u)
	}
	add(50)
	if u, err = f.st.CountUnread(ctx, f.connID); err != nil {
		t.Fatal(err)
	}
	if u.Total != store.MaxUnreadCounted || !u.More || len(u.Sessions) != 1 || u.Sessions[0].Count != store.MaxUnreadCounted || !u.Sessions[0].More {
		t.Fatalf("past the cap: %+v", u)
	}
}

// TestStatementsUseGenericPlans: the store's connections plan each prepared
// statement once (the generic plans the plan tests explain), not anew on
// every call; a plan_cache_mode in the database URL wins.
func TestStatementsUseGenericPlans(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	if v, err := st.Setting(ctx, "plan_cache_mode"); err != nil || v != "force_generic_plan" {
		t.Fatalf("plan_cache_mode %q, %v", v, err)
	}
	other, err := store.Open(ctx, storetest.SQL(t, st).DSN()+" plan_cache_mode=auto")
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if v, err := other.Setting(ctx, "plan_cache_mode"); err != nil || v != "auto" {
		t.Fatalf("with the URL's setting: plan_cache_mode %q, %v", v, err)
	}
}

// genericPlan is EXPLAIN ANALYZE of sql's generic plan, the one the store's
// connections use (plan_cache_mode force_generic_plan): prepared, then
// executed with args, sent in the statement's text. (An EXPLAIN of sql with
// args plans it with their values: a custom plan the server never runs.)
func genericPlan(t *testing.T, tx pgx.Tx, sql string, args ...any) string {
	t.Helper()
	ctx := context.Background()
	if _, err := tx.Exec(ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
		t.Fatal(err)
	}
	// A prepared statement outlives the transaction: each has a name of
	// its own, and is let go once explained.
	name := fmt.Sprintf("generic_plan_%d", genericPlans.Add(1))
	if _, err := tx.Exec(ctx, `PREPARE `+name+` AS `+sql); err != nil {
		t.Fatal(err)
	}
	marks := make([]string, len(args))
	for i := range args {
		marks[i] = fmt.Sprintf("$%d", i+1)
	}
	rows, err := tx.Query(ctx, `EXPLAIN (ANALYZE, BUFFERS, COSTS off, TIMING off, SUMMARY off) EXECUTE `+name+`(`+strings.Join(marks, ", ")+`)`,
		append([]any{pgx.QueryExecModeSimpleProtocol}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	plan := planOf(t, rows)
	if _, err := tx.Exec(ctx, `DEALLOCATE `+name); err != nil {
		t.Fatal(err)
	}
	return plan
}

var genericPlans atomic.Int64

package store_test

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// mailFixture is an owner, a project, a session and an agent connection
// with a claimed profile, invited to the session.
type mailFixture struct {
	st     *store.Store
	owner  *store.Owner
	sess   *store.Session
	connID int64
}

// newMailFixture makes a mailFixture on a fresh database.
func newMailFixture(t testing.TB) *mailFixture {
	t.Helper()
	return fillMailFixture(t, storetest.New(t))
}

// fillMailFixture makes what newMailFixture makes, on st.
func fillMailFixture(t testing.TB, st *store.Store) *mailFixture {
	t.Helper()
	ctx := context.Background()
	o, err := st.CreateOwner(ctx, store.NewOwner{Email: "o@example.com", DisplayName: "Olive", Password: "long enough password"})
	if err != nil {
		t.Fatal(err)
	}
	p, err := st.CreateProject(ctx, o.WorkspaceID, "P")
	if err != nil {
		t.Fatal(err)
	}
	session, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: o.WorkspaceID, ProjectID: p.ID, Type: "agent_session", Title: "S"})
	if err != nil {
		t.Fatal(err)
	}
	c, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: o.WorkspaceID, OwnerID: o.ID, ClientName: "cli",
		Scopes: store.AllScopes, ProjectIDs: []int64{p.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimProfile(ctx, o.WorkspaceID, c.ID, "ada", "Ada"); err != nil {
		t.Fatal(err)
	}
	if err := st.Invite(ctx, o.WorkspaceID, session.ID, c.ID, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	return &mailFixture{st: st, owner: o, sess: session, connID: c.ID}
}

// agentNote posts an agent's note as post_session_note does.
func (f *mailFixture) agentNote(t *testing.T, subject string) int64 {
	t.Helper()
	n, _, err := f.st.PostAgentNote(context.Background(), store.AgentNote{WorkspaceID: f.owner.WorkspaceID, ConnectionID: f.connID,
		SessionType: f.sess.Type, SessionID: f.sess.PublicID, Subject: subject, Body: "b", IdempotencyKey: subject})
	if err != nil {
		t.Fatal(err)
	}
	return n.ID
}

// ownerNote posts an owner's note to the whole session, as the page does.
func (f *mailFixture) ownerNote(t *testing.T, subject string) *store.Note {
	t.Helper()
	n, _, err := f.st.PostOwnerNote(context.Background(), store.OwnerNote{WorkspaceID: f.owner.WorkspaceID, SessionID: f.sess.ID,
		OwnerID: f.owner.ID, Type: store.MessageNote, Subject: subject, Body: "b"})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// planOf collects the lines of an EXPLAIN's rows into one text.
func planOf(t *testing.T, rows pgx.Rows) string {
	t.Helper()
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return strings.Join(plan, "\n")
}

func TestEmailListsAndReadMarks(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	var ids []int64
	for _, s := range []string{"a", "b", "c", "d"} {
		ids = append(ids, f.agentNote(t, s))
	}
	page, err := f.st.ListSessionMail(ctx, f.owner.WorkspaceID, f.sess.ID, 0, 2)
	if err != nil || len(page) != 3 || page[0].ID != ids[3] || page[1].ID != ids[2] {
		t.Fatalf("first page %v %v", err, page)
	}
	page, _ = f.st.ListSessionMail(ctx, f.owner.WorkspaceID, f.sess.ID, ids[2], 2)
	if len(page) != 2 || page[0].ID != ids[1] || page[1].ID != ids[0] {
		t.Fatalf("older page %v", page)
	}
	after, _ := f.st.SessionMailAfter(ctx, f.owner.WorkspaceID, f.sess.ID, ids[1])
	if len(after) != 2 || after[0].ID != ids[3] || after[1].ID != ids[2] {
		t.Fatalf("after %v", after)
	}
	if other, _ := f.st.SessionMailAfter(ctx, f.owner.WorkspaceID+1, f.sess.ID, 0); len(other) != 0 {
		t.Fatal("another workspace read the mail")
	}
	if prev, err := f.st.MarkMailRead(ctx, f.owner.ID, f.sess.ID, ids[2]); err != nil || prev != 0 {
		t.Fatal(prev, err)
	}
	if prev, _ := f.st.MarkMailRead(ctx, f.owner.ID, f.sess.ID, ids[0]); prev != ids[2] { // never moves back
		t.Fatalf("previous mark %d, want %d", prev, ids[2])
	}
	if got, _ := f.st.LastReadNote(ctx, f.owner.ID, f.sess.ID); got != ids[2] {
		t.Fatalf("last read %d, want %d", got, ids[2])
	}
	sums, err := f.st.ListSessionSummaries(ctx, f.owner.WorkspaceID, f.sess.ProjectID, f.owner.ID)
	if err != nil || len(sums) != 1 || sums[0].Unread != 1 || sums[0].LastNoteAt == nil {
		t.Fatalf("summaries %v %+v", err, sums)
	}
}

// Notes of one session become visible in id order, so "id > newest seen"
// never skips a note: the session row is locked before a note takes its id.
func TestNoteIDsCommitInOrder(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	tx1 := storetest.SQL(t, f.st).Begin()
	defer tx1.Rollback(ctx)
	// tx1 holds the session lock as insertNote would, before taking an id.
	if _, err := tx1.Exec(ctx, `SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE`, f.sess.ID); err != nil {
		t.Fatal(err)
	}
	done := make(chan int64)
	go func() {
		n, _, err := f.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: f.owner.WorkspaceID, SessionID: f.sess.ID, OwnerID: f.owner.ID, Type: "note", Body: "waits"})
		if err != nil {
			t.Error(err)
		}
		done <- n.ID
	}()
	var first int64
	if err := tx1.QueryRow(ctx, `INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
		VALUES ($1, $2, 'owner', $3, 'o', 'O', 'note', '', 'first') RETURNING id`, f.owner.WorkspaceID, f.sess.ID, f.owner.ID).Scan(&first); err != nil {
		t.Fatal(err)
	}
	if err := tx1.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if second := <-done; second <= first {
		t.Fatalf("the waiting note took id %d, not after %d", second, first)
	}
}

func sleep() { time.Sleep(10 * time.Millisecond) }

// TestParseOwnerSlug: only OwnerSlug's own form names an owner.
func TestParseOwnerSlug(t *testing.T) {
	t.Parallel()
	for slug, want := range map[string]int64{
		store.OwnerSlug(7): 7, "owner-123": 123, "owner-0": 0, "owner-07": 0, "owner-+7": 0, "owner--7": 0,
		"owner-": 0, "owner-7x": 0, "ext-owner-7": 0, "Owner-7": 0, "owner-99999999999999999999": 0,
	} {
		got, ok := store.ParseOwnerSlug(slug)
		if got != want || ok != (want != 0) {
			t.Errorf("ParseOwnerSlug(%q) = %d, %v; want %d", slug, got, ok, want)
		}
	}
}

// TestOwnerSlugAgreesWithSQL: the SQL functions of migration 100 and
// OwnerSlug/ParseOwnerSlug build and read the same slugs.
func TestOwnerSlugAgreesWithSQL(t *testing.T) {
	t.Parallel()
	db := storetest.SQL(t, storetest.New(t))
	for _, slug := range []string{store.OwnerSlug(7), store.OwnerSlug(1), store.OwnerSlug(999999999999999999), "owner-1000000000000000000",
		"owner-9223372036854775807", "owner-0", "owner-07", "owner-+7", "owner--7", "owner-", "owner-7x", "owner- 7", "ext-owner-7",
		"Owner-7", "owner-99999999999999999999", "owner-７", "osfoundry", ""} {
		var built string
		var id *int64
		var is bool
		if err := db.QueryRow(`SELECT coalesce(owner_slug(owner_slug_id($1)), ''), owner_slug_id($1), is_owner_slug($1)`, slug).
			Scan(&built, &id, &is); err != nil {
			t.Fatal(err)
		}
		want, ok := store.ParseOwnerSlug(slug)
		if is != ok || (ok && (id == nil || *id != want || built != slug)) || (!ok && id != nil) {
			t.Errorf("%q: SQL reads id %v (is_owner_slug %v, rebuilt %q), Go %d, %v", slug, id, is, built, want, ok)
		}
	}
}

// TestRereadWritesNothing: reading the same page again (no new receipt, a
// read mark that does not move) writes nothing, not even a row lock, so the
// read commits without waiting for a WAL flush; a read that moves the mark
// still moves it.
func TestRereadWritesNothing(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	if _, err := f.st.ClaimProfile(ctx, ws, f.connID, "ada", "Ada"); err != nil {
		t.Fatal(err)
	}
	n := f.ownerNote(t, "s")
	read := func() {
		t.Helper()
		if _, _, err := f.st.ReadAgentMail(ctx, ws, f.connID, f.sess.Type, f.sess.PublicID, 0, 10); err != nil {
			t.Fatal(err)
		}
	}
	db := storetest.SQL(t, f.st)
	mark := func() (through int64, xmax string) {
		t.Helper()
		if err := db.QueryRow(`SELECT read_through, xmax::text FROM agent_mail_reads WHERE session_id = $1 AND connection_id = $2`,
			f.sess.ID, f.connID).Scan(&through, &xmax); err != nil {
			t.Fatal(err)
		}
		return through, xmax
	}
	read()
	if through, _ := mark(); through != n.ID {
		t.Fatalf("read mark %d, want %d", through, n.ID)
	}
	read()
	if through, xmax := mark(); through != n.ID || xmax != "0" {
		t.Fatalf("after a second read of the same page: mark %d (want %d), row locked by transaction %s (want none)", through, n.ID, xmax)
	}
	n2 := f.ownerNote(t, "s2")
	read()
	if through, _ := mark(); through != n2.ID {
		t.Fatalf("read mark %d after a new note, want %d", through, n2.ID)
	}
}

// TestOwnerMarkUnmovedWritesNothing: a page view that does not move the
// owner's read mark leaves its row as it was (no new version, no lock).
func TestOwnerMarkUnmovedWritesNothing(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	n := f.ownerNote(t, "s")
	db := storetest.SQL(t, f.st)
	row := func() (version string) {
		t.Helper()
		if err := db.QueryRow(`SELECT xmin::text || '/' || xmax::text FROM note_reads WHERE owner_id = $1 AND session_id = $2`,
			f.owner.ID, f.sess.ID).Scan(&version); err != nil {
			t.Fatal(err)
		}
		return version
	}
	for _, upto := range []int64{n.ID, n.ID, n.ID - 1} {
		if _, err := f.st.MarkMailRead(ctx, f.owner.ID, f.sess.ID, upto); err != nil {
			t.Fatal(err)
		}
	}
	first := row()
	if _, err := f.st.MarkMailRead(ctx, f.owner.ID, f.sess.ID, n.ID); err != nil {
		t.Fatal(err)
	}
	if again := row(); again != first || first[len(first)-2:] != "/0" {
		t.Fatalf("row version %s after an unmoved mark, was %s (want unchanged, unlocked)", again, first)
	}
}

// TestQuietSessionPageUsesItsIndex: the page of a quiet session whose notes
// are older than a busy session's reads the session's own index, also in a
// generic plan (the one prepared statements settle on), rather than walking
// the primary key backwards through the busy session's notes.
func TestQuietSessionPageUsesItsIndex(t *testing.T) {
	t.Parallel()
	f := newMailFixture(t)
	ctx := context.Background()
	ws := f.owner.WorkspaceID
	if _, err := f.st.ClaimProfile(ctx, ws, f.connID, "ada", "Ada"); err != nil {
		t.Fatal(err)
	}
	busy, err := f.st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: f.sess.ProjectID, Type: "team_session", Title: "Busy"})
	if err != nil {
		t.Fatal(err)
	}
	db := storetest.SQL(t, f.st)
	for _, s := range []struct {
		id    int64
		count int
	}{{f.sess.ID, 20}, {busy.ID, 20000}} {
		db.Exec(`
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_slug, sender_name, message_type, subject, body)
			SELECT $1, $2, 'owner', $3::bigint, owner_slug($3::bigint), 'O', 'note', 's', 'b' FROM generate_series(1, $4::int)`,
			ws, s.id, f.owner.ID, s.count)
	}
	db.Exec(`ANALYZE notes`)
	tx := db.Begin()
	defer tx.Rollback(ctx)
	text := genericPlan(t, tx, store.ReadAgentMailSQL, ws, f.connID, f.sess.Type, f.sess.PublicID, int64(math.MaxInt64), 10, store.ReceiptsChannel)
	if strings.Contains(text, "using notes_pkey") || !strings.Contains(text, "using notes_session_idx") {
		t.Fatalf("the page does not read notes_session_idx:\n%s", text)
	}
}

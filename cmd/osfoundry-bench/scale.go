package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// The scale scenario (--scale 10000,1000000; make bench-scale): every tool
// and owner page, one call at a time, over a spread of workspaces of their
// own as it grows from the first note count to the last, so that a cost
// that grows with the data shows as the ratio of its two figures.
//
// The spread: 20 workspaces of 5 projects and 150 sessions each (3,000),
// one session in 20 busy (7 notes in 10 go to busy sessions), 20 agents per
// workspace (400) seated in two projects and invited to 5 to 50 of its
// sessions, statuses set. Notes follow, in id order, a timeline that ends
// now: nine in ten from an agent invited to the session (to the whole
// session; one in 50 a reply to the owner, one in 50 to another agent), one
// in ten from the owner (to the whole session, replies to an agent in
// answer to its latest note, analysis). Seven agents in ten keep up: read
// marks at the newest note of each session they are in, and a receipt for
// every note read_session_mail has returned them; the others are far
// behind, their marks where they stopped reading (a tenth into their
// sessions' first notes), and never move. Owners have read every session
// but the newest notes of a few, and never opened every other busy session
// (its whole backlog unread). The notes are written straight into the
// table in batches of set-based SQL (generate_series), then VACUUM ANALYZE
// as autovacuum would.
//
// The measured calls are workspace 0's: its owner's pages, and two agents'
// tools: one invited to 50 sessions (busy ones among them) and far behind
// on its mail, and one invited to 5 that keeps up.

// scaleRow is one call at one note count: its median and 99th-percentile
// latency over the calls made (concurrency 1).
type scaleRow struct {
	Call   string  `json:"call"`
	Notes  int     `json:"notes"`
	P50ms  float64 `json:"p50_ms"`
	P99ms  float64 `json:"p99_ms"`
	Calls  int     `json:"calls"`
	Errors int     `json:"errors,omitempty"`
	// FirstError is the first failed call's error.
	FirstError string `json:"first_error,omitempty"`
}

// scaleDatabase is the database at one note count.
type scaleDatabase struct {
	Notes int `json:"notes"`
	// DatabaseMB is pg_database_size, NotesMB the notes table with its
	// indexes and TOAST, ReceiptsMB the receipts'.
	DatabaseMB float64 `json:"database_mb"`
	NotesMB    float64 `json:"notes_mb"`
	ReceiptsMB float64 `json:"receipts_mb"`
	Receipts   int64   `json:"receipts"`
	// FillSeconds is how long writing the notes, marks and receipts up to
	// this count took, VACUUM ANALYZE included.
	FillSeconds float64 `json:"fill_seconds"`
}

type scaleResult struct {
	rows     []scaleRow
	database []scaleDatabase
}

// Shape of the spread.
const (
	scaleWorkspaces        = 20
	scaleProjects          = 5   // per workspace
	scaleSessions          = 150 // per workspace
	scaleAgents            = 20  // per workspace
	scaleBusyEvery         = 20  // one session in 20 is busy
	scaleMaxInvitations    = 50
	scaleMinInvitations    = 5
	scaleNoteBatch         = 50_000
	scaleNoteSpacing       = 2500 * time.Millisecond
	scaleStep              = 3 * time.Second
	scaleMinCalls          = 5
	scaleMaxCalls          = 300
	scaleFarBehindFraction = 10 // a far-behind agent stopped reading a tenth into its sessions
)

// scaleFixture is the spread's data as the fill statements and the
// measured calls need it.
type scaleFixture struct {
	runID string
	start time.Time // the timeline ends here
	total int       // the last note count: the timeline's length
	// Per session (index 0…): id, workspace id, owner, busy, and its
	// invited connections (a range of invConn).
	sessIDs, sessWS, sessOwner []int64
	invStart, invCount         []int32
	busy, quiet                []int32 // session indexes, 1-based for SQL arrays
	// neverRead are the busy sessions their owner never opened (every
	// other one, not the measured one): their backlog is all unread.
	neverRead []int64
	// Per invitation: the connection, its slug and display name, whether it
	// keeps up.
	invConn             []int64
	invSlug, invName    []string
	keepsUp             map[int64]bool
	farBehind, keeping  []int64
	ownerSlugs          []string
	written             int // notes written so far
	prevTop             int64
	measured            scaleMeasured
	sessionsOfWorkspace map[int64][]int64
}

// scaleMeasured are the measured calls' subjects, all in workspace 0.
type scaleMeasured struct {
	owner        *http.Client
	ownerID      int64
	workspaceID  int64
	project      int64 // the project of the busy session
	busy, quiet  *store.Session
	heavy, light agent
	reader       int64 // a connection that reads the busy session's owner notes one by one (poll after a receipt)
}

// runScale builds the spread and measures every call at each note count.
func (fx *fixture) runScale(ctx context.Context, st *store.Store, counts []int) (*scaleResult, error) {
	slices.Sort(counts)
	sf, err := fx.prepareScale(ctx, st, counts[len(counts)-1])
	if err != nil {
		return nil, err
	}
	out := &scaleResult{}
	for _, n := range counts {
		start := time.Now()
		fmt.Fprintf(os.Stderr, "scale: filling to %d notes …\n", n)
		if err := sf.fill(ctx, fx, n); err != nil {
			return nil, err
		}
		db, err := sf.database(ctx, fx, n)
		if err != nil {
			return nil, err
		}
		db.FillSeconds = time.Since(start).Seconds()
		out.database = append(out.database, db)
		fmt.Fprintf(os.Stderr, "scale: %d notes, database %.0f MB (filled in %.0f s); measuring …\n", n, db.DatabaseMB, db.FillSeconds)
		rows, err := sf.measure(ctx, fx, st, n)
		if err != nil {
			return nil, err
		}
		out.rows = append(out.rows, rows...)
	}
	return out, nil
}

// prepareScale creates the workspaces, projects, sessions, agents, seats,
// invitations and statuses, and signs workspace 0's owner in.
func (fx *fixture) prepareScale(ctx context.Context, st *store.Store, total int) (*scaleFixture, error) {
	sf := &scaleFixture{runID: fx.runID, start: time.Now(), total: total, keepsUp: map[int64]bool{}, sessionsOfWorkspace: map[int64][]int64{}}
	fmt.Fprintln(os.Stderr, "scale: creating 20 workspaces, 3,000 sessions, 400 agents …")
	var password string
	type wsAgents struct {
		conns []int64
		slugs []string
		names []string
	}
	agentsOf := map[int64]*wsAgents{}
	for w := range scaleWorkspaces {
		email := fmt.Sprintf("scale-%d-%s@example.com", w, fx.runID)
		password = "scale password " + fx.runID
		owner, err := st.CreateOwner(ctx, store.NewOwner{Email: email, DisplayName: fmt.Sprintf("Scale owner %d", w), Password: password,
			WorkspaceName: fmt.Sprintf("scale-%d-%s", w, fx.runID)})
		if err != nil {
			return nil, err
		}
		ws := owner.WorkspaceID
		var projects []int64
		for p := range scaleProjects {
			pr, err := st.CreateProject(ctx, ws, fmt.Sprintf("Scale %d.%d", w, p))
			if err != nil {
				return nil, err
			}
			projects = append(projects, pr.ID)
		}
		for i := range scaleSessions {
			s, err := st.CreateSession(ctx, store.NewSession{WorkspaceID: ws, ProjectID: projects[i%scaleProjects],
				Type: store.SessionTypes[i%len(store.SessionTypes)], Title: fmt.Sprintf("Scale %d.%d", w, i), CreatedBy: owner.ID})
			if err != nil {
				return nil, err
			}
			sf.sessIDs, sf.sessWS, sf.sessOwner = append(sf.sessIDs, s.ID), append(sf.sessWS, ws), append(sf.sessOwner, owner.ID)
			sf.sessionsOfWorkspace[ws] = append(sf.sessionsOfWorkspace[ws], s.ID)
			idx := int32(len(sf.sessIDs))
			if i%scaleBusyEvery == 0 {
				sf.busy = append(sf.busy, idx)
				if i%(2*scaleBusyEvery) == scaleBusyEvery {
					sf.neverRead = append(sf.neverRead, s.ID)
				}
			} else {
				sf.quiet = append(sf.quiet, idx)
			}
			if w == 0 && i == 0 {
				sf.measured.busy = s
			}
			if w == 0 && i == 1 {
				sf.measured.quiet = s
			}
		}
		wa := &wsAgents{}
		agentsOf[ws] = wa
		for a := range scaleAgents {
			seated := []int64{projects[a%scaleProjects], projects[(a+1)%scaleProjects]}
			conn, token, _, err := st.CreateTokenConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: owner.ID,
				ClientName: "scale bench", Scopes: store.AllScopes, ProjectIDs: seated}, fx.url+"/mcp", time.Hour)
			if err != nil {
				return nil, err
			}
			p, err := st.ClaimProfile(ctx, ws, conn.ID, fmt.Sprintf("scale-%d-%d", w, a), fmt.Sprintf("Scale agent %d.%d", w, a))
			if err != nil {
				return nil, err
			}
			wa.conns, wa.slugs, wa.names = append(wa.conns, conn.ID), append(wa.slugs, p.SenderSlug), append(wa.names, p.DisplayName)
			// The measured agents: agent 0 of workspace 0 is invited to 50
			// sessions and far behind, agent 1 to 5 and keeps up.
			keeps := a%10 < 7
			if w == 0 && a == 0 {
				keeps = false
				sf.measured.heavy = agent{connectionID: conn.ID, token: token, slug: p.SenderSlug}
			}
			if w == 0 && a == 1 {
				keeps = true
				sf.measured.light = agent{connectionID: conn.ID, token: token, slug: p.SenderSlug}
			}
			sf.keepsUp[conn.ID] = keeps
			if keeps {
				sf.keeping = append(sf.keeping, conn.ID)
			} else {
				sf.farBehind = append(sf.farBehind, conn.ID)
			}
		}
		if w == 0 {
			sf.measured.ownerID, sf.measured.workspaceID, sf.measured.project = owner.ID, ws, projects[0]
			c, err := fx.login(email, password)
			if err != nil {
				return nil, fmt.Errorf("scale owner sign-in: %w", err)
			}
			sf.measured.owner = c
		}
		sf.ownerSlugs = append(sf.ownerSlugs, store.OwnerSlug(owner.ID))
	}
	// Invitations: agent a of a workspace in 5…50 consecutive sessions of it
	// (the heavy agent in 50, the light one in 5), from an offset of its own.
	invited := map[int64][]int{} // session index → agent positions in agentsOf
	type inv struct {
		session, conn int64
		pos           int
	}
	var invs []inv
	for w := range scaleWorkspaces {
		ws := sf.sessWS[w*scaleSessions]
		wa := agentsOf[ws]
		for a, conn := range wa.conns {
			n := scaleMinInvitations + (a*13)%(scaleMaxInvitations-scaleMinInvitations+1)
			offset := (a * 37) % scaleSessions
			switch {
			case w == 0 && a == 0:
				n, offset = scaleMaxInvitations, 0
			case w == 0 && a == 1:
				n, offset = scaleMinInvitations, 0
			}
			for k := range n {
				si := w*scaleSessions + (offset+k)%scaleSessions
				invs = append(invs, inv{sf.sessIDs[si], conn, a})
				invited[int64(si)] = append(invited[int64(si)], a)
			}
		}
	}
	// A reader for the "poll after a receipt": invited to the busy session,
	// reads nothing until measured.
	{
		ws := sf.measured.workspaceID
		conn, err := st.CreateConnection(ctx, store.NewConnection{WorkspaceID: ws, OwnerID: sf.measured.ownerID, ClientName: "scale reader",
			Scopes: store.AllScopes, ProjectIDs: []int64{sf.measured.busy.ProjectID}})
		if err != nil {
			return nil, err
		}
		if _, err := st.ClaimProfile(ctx, ws, conn.ID, "scale-reader", "Scale reader"); err != nil {
			return nil, err
		}
		sf.measured.reader = conn.ID
		if err := st.Invite(ctx, ws, sf.measured.busy.ID, conn.ID, store.RoleContributor); err != nil {
			return nil, err
		}
	}
	sessions, conns := make([]int64, len(invs)), make([]int64, len(invs))
	for i, v := range invs {
		sessions[i], conns[i] = v.session, v.conn
	}
	if _, err := fx.pool.Exec(ctx, `
		INSERT INTO invitations (workspace_id, session_id, connection_id, role)
		SELECT s.workspace_id, s.id, x.conn, CASE WHEN x.i % 5 = 0 THEN 'runner' ELSE 'contributor' END
		FROM unnest($1::bigint[], $2::bigint[]) WITH ORDINALITY AS x(session, conn, i) JOIN sessions s ON s.id = x.session
		ON CONFLICT DO NOTHING`, sessions, conns); err != nil {
		return nil, fmt.Errorf("invitations: %w", err)
	}
	for si := range sf.sessIDs {
		ws := sf.sessWS[si]
		wa := agentsOf[ws]
		sf.invStart = append(sf.invStart, int32(len(sf.invConn)+1))
		sf.invCount = append(sf.invCount, int32(len(invited[int64(si)])))
		for _, a := range invited[int64(si)] {
			sf.invConn, sf.invSlug, sf.invName = append(sf.invConn, wa.conns[a]), append(sf.invSlug, wa.slugs[a]), append(sf.invName, wa.names[a])
		}
	}
	// Statuses: every agent says what it is on; agents of a workspace share
	// a few repositories and branches.
	if _, err := fx.pool.Exec(ctx, `
		INSERT INTO statuses (connection_id, repo, repo_key, branch, task)
		SELECT p.connection_id, 'https://github.com/acme/repo-' || (p.connection_id % 7) || '.git', 'acme/repo-' || (p.connection_id % 7),
			'feature/' || (p.connection_id % 11), 'Working on step ' || p.connection_id
		FROM agent_profiles p JOIN connections c ON c.id = p.connection_id WHERE c.client_name = 'scale bench'
		ON CONFLICT (connection_id) DO NOTHING`); err != nil {
		return nil, fmt.Errorf("statuses: %w", err)
	}
	return sf, nil
}

// fill writes notes up to n, their events, replies' parents, then moves the
// read marks and writes the receipts of what the agents that keep up read,
// and vacuums.
func (sf *scaleFixture) fill(ctx context.Context, fx *fixture, n int) error {
	start := time.Now()
	for from := sf.written + 1; from <= n; from += scaleNoteBatch {
		to := min(n, from+scaleNoteBatch-1)
		if _, err := fx.pool.Exec(ctx, `
			INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id, sender_slug, sender_name,
				recipient_slug, message_type, subject, body, created_at)
			SELECT ($2::bigint[])[x.s], ($1::bigint[])[x.s], k.kind,
				CASE WHEN k.kind = 'owner' THEN ($3::bigint[])[x.s] END,
				CASE WHEN k.kind = 'agent' THEN ($6::bigint[])[x.a] END,
				CASE WHEN k.kind = 'agent' THEN ($7::text[])[x.a] ELSE 'owner-' || ($3::bigint[])[x.s] END,
				CASE WHEN k.kind = 'agent' THEN ($8::text[])[x.a] ELSE 'Scale owner' END,
				k.recipient, k.type,
				'Step ' || g || ': w' || floor(3000 * random() ^ 3)::int,
				(SELECT string_agg('w' || floor(3000 * random() ^ 3)::int, ' ') FROM generate_series(1, 20 + g % 25)),
				$11::timestamptz - ($12::bigint - g) * make_interval(secs => $13::float8)
			FROM generate_series($9::int, $10::int) g
			CROSS JOIN LATERAL (SELECT CASE WHEN g % 10 < 7 THEN ($14::int[])[1 + (g::bigint * 7919) % cardinality($14::int[])]
				ELSE ($15::int[])[1 + (g::bigint * 104729) % cardinality($15::int[])] END AS s) x0
			CROSS JOIN LATERAL (SELECT x0.s, ($4::int[])[x0.s] AS first, ($5::int[])[x0.s] AS cnt) x1
			CROSS JOIN LATERAL (SELECT x1.s, x1.first + (g / 3) % greatest(x1.cnt, 1) AS a,
				x1.first + (g / 3 + 1) % greatest(x1.cnt, 1) AS other, x1.cnt) x
			CROSS JOIN LATERAL (SELECT
				CASE WHEN g % 10 = 3 OR x.cnt = 0 THEN 'owner' ELSE 'agent' END AS kind,
				CASE WHEN g % 10 = 3 OR x.cnt = 0 THEN
					CASE WHEN (g / 10) % 10 BETWEEN 4 AND 7 AND x.cnt > 0 THEN ($7::text[])[x.a] END
				WHEN g % 50 = 7 THEN 'owner-' || ($3::bigint[])[x.s]
				WHEN g % 50 = 17 AND x.cnt > 1 THEN ($7::text[])[x.other] END AS recipient,
				CASE WHEN g % 10 = 3 OR x.cnt = 0 THEN
					CASE WHEN (g / 10) % 10 BETWEEN 4 AND 7 AND x.cnt > 0 THEN 'reply' WHEN (g / 10) % 10 = 8 THEN 'analysis' ELSE 'note' END
				WHEN g % 50 = 7 OR (g % 50 = 17 AND x.cnt > 1) THEN 'reply' ELSE 'note' END AS type) k`,
			sf.sessIDs, sf.sessWS, sf.sessOwner, sf.invStart, sf.invCount, sf.invConn, sf.invSlug, sf.invName,
			from, to, sf.start, sf.total, scaleNoteSpacing.Seconds(), sf.busy, sf.quiet); err != nil {
			return fmt.Errorf("notes: %w", err)
		}
		fmt.Fprintf(os.Stderr, "  scale: %d of %d notes (%.0f s)\n", to, n, time.Since(start).Seconds())
	}
	var top int64
	if err := fx.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM notes WHERE session_id = ANY($1)`, sf.sessIDs).Scan(&top); err != nil {
		return err
	}
	steps := []struct{ what, sql string }{
		// A reply answers the latest note before it of its session.
		{"replies' parents", `
			UPDATE notes r SET in_reply_to = (SELECT p.id FROM notes p WHERE p.session_id = r.session_id AND p.id < r.id
				ORDER BY p.session_id, p.id DESC LIMIT 1)
			WHERE r.session_id = ANY($1) AND r.id > $2 AND r.message_type = 'reply'`},
		// Each note but analysis has its note_posted event, in order.
		{"events", `
			INSERT INTO resource_events (session_id, sequence, kind, note_id, payload, created_at)
			SELECT n.session_id, s.last_event_seq + row_number() OVER (PARTITION BY n.session_id ORDER BY n.id), 'note_posted', n.id,
				jsonb_build_object('note_id', n.id, 'sender_slug', n.sender_slug, 'message_type', n.message_type), n.created_at
			FROM notes n JOIN sessions s ON s.id = n.session_id
			WHERE n.session_id = ANY($1) AND n.id > $2 AND n.message_type <> 'analysis'`},
		{"sequences", `
			UPDATE sessions s SET last_event_seq = e.top
			FROM (SELECT session_id, max(sequence) AS top FROM resource_events WHERE session_id = ANY($1) GROUP BY session_id) e
			WHERE s.id = e.session_id AND s.last_event_seq < e.top AND $2::bigint >= 0`},
		// Agents that keep up have read every session they are in to its
		// newest note; far-behind ones stopped a tenth into the notes of the
		// first fill, and their marks stay.
		{"agents' read marks", `
			INSERT INTO agent_mail_reads AS m (session_id, connection_id, read_through)
			SELECT i.session_id, i.connection_id, t.id
			FROM invitations i
			CROSS JOIN LATERAL (SELECT CASE WHEN i.connection_id = ANY($3::bigint[])
				THEN (SELECT max(n.id) FROM notes n WHERE n.session_id = i.session_id)
				ELSE (SELECT n.id FROM notes n WHERE n.session_id = i.session_id ORDER BY n.session_id, n.id
					OFFSET (SELECT count(*) / $4::int FROM notes c WHERE c.session_id = i.session_id) LIMIT 1) END AS id) t
			WHERE i.session_id = ANY($1) AND t.id IS NOT NULL AND $2::bigint >= 0
				AND (i.connection_id = ANY($3::bigint[]) OR NOT EXISTS (SELECT 1 FROM agent_mail_reads r
					WHERE r.session_id = i.session_id AND r.connection_id = i.connection_id))
			ON CONFLICT (session_id, connection_id) DO UPDATE SET read_through = greatest(m.read_through, EXCLUDED.read_through)`},
		// A receipt for every note read_session_mail returned them: readable
		// (to the whole session or to them, never analysis), not their own,
		// up to their mark, written since the last fill.
		{"receipts", `
			INSERT INTO note_receipts (note_id, connection_id, read_at, session_id, owner_note)
			SELECT n.id, m.connection_id, n.created_at + interval '1 minute', n.session_id, n.sender_kind = 'owner'
			FROM agent_mail_reads m JOIN connections c ON c.id = m.connection_id
			JOIN notes n ON n.session_id = m.session_id AND n.id > $2 AND n.id <= m.read_through
			WHERE m.session_id = ANY($1) AND n.message_type <> 'analysis' AND n.sender_connection_id IS DISTINCT FROM m.connection_id
				AND (n.recipient_slug IS NULL OR n.recipient_slug = c.sender_slug)
			ON CONFLICT DO NOTHING`},
		// Owners have read everything but the newest 5 notes of the busy
		// sessions and the newest 2 of one quiet session in 7, and never
		// opened every other busy session (neverRead): tens of thousands
		// of notes unread there at 1 M, what their counts must not read.
		{"owners' read marks", `
			INSERT INTO note_reads AS r (owner_id, session_id, last_read_note_id)
			SELECT s.created_by, s.id, t.id
			FROM sessions s
			CROSS JOIN LATERAL (SELECT n.id FROM notes n WHERE n.session_id = s.id ORDER BY n.session_id, n.id DESC
				OFFSET CASE WHEN s.id = ANY($3::bigint[]) THEN 5 WHEN s.id % 7 = 0 THEN 2 ELSE 0 END LIMIT 1) t
			WHERE s.id = ANY($1) AND $2::bigint >= 0 AND s.id <> ALL($4::bigint[])
			ON CONFLICT (owner_id, session_id) DO UPDATE SET last_read_note_id = EXCLUDED.last_read_note_id`},
	}
	busyIDs := make([]int64, len(sf.busy))
	for i, b := range sf.busy {
		busyIDs[i] = sf.sessIDs[b-1]
	}
	for _, s := range steps {
		t := time.Now()
		args := []any{sf.sessIDs, sf.prevTop}
		switch s.what {
		case "agents' read marks":
			args = append(args, sf.keeping, scaleFarBehindFraction)
		case "owners' read marks":
			args = append(args, busyIDs, sf.neverRead)
		}
		if _, err := fx.pool.Exec(ctx, s.sql, args...); err != nil {
			return fmt.Errorf("%s: %w", s.what, err)
		}
		fmt.Fprintf(os.Stderr, "  scale: %s (%.0f s)\n", s.what, time.Since(t).Seconds())
	}
	t := time.Now()
	if _, err := fx.pool.Exec(ctx, `VACUUM (ANALYZE)`); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "  scale: vacuum analyze (%.0f s)\n", time.Since(t).Seconds())
	sf.written, sf.prevTop = n, top
	return nil
}

// database reads the database's size at n notes.
func (sf *scaleFixture) database(ctx context.Context, fx *fixture, n int) (scaleDatabase, error) {
	d := scaleDatabase{Notes: n}
	var db, notes, receipts int64
	err := fx.pool.QueryRow(ctx, `SELECT pg_database_size(current_database()), pg_total_relation_size('notes'),
		pg_total_relation_size('note_receipts'), (SELECT count(*) FROM note_receipts)`).Scan(&db, &notes, &receipts, &d.Receipts)
	mb := func(b int64) float64 { return float64(b) / (1 << 20) }
	d.DatabaseMB, d.NotesMB, d.ReceiptsMB = mb(db), mb(notes), mb(receipts)
	return d, err
}

// scaleCall is one measured call: before runs untimed before each call (nil:
// nothing), call is timed; a call that returns errRetry is made again, and
// timed again, for at most a few seconds.
type scaleCall struct {
	name   string
	before func() error
	call   func(i int) error
}

// errRetry asks for the call again: what it measures was not there yet.
var errRetry = errors.New("not yet")

// measure makes each call one at a time for scaleStep (scaleMinCalls to
// scaleMaxCalls of them) and reports its latency percentiles at n notes.
func (sf *scaleFixture) measure(ctx context.Context, fx *fixture, st *store.Store, n int) ([]scaleRow, error) {
	calls, err := sf.calls(ctx, fx, st)
	if err != nil {
		return nil, err
	}
	var out []scaleRow
	for _, c := range calls {
		row := scaleRow{Call: c.name, Notes: n}
		var lat []time.Duration
		deadline := time.Now().Add(scaleStep)
		for i := 0; i < scaleMaxCalls && (i < scaleMinCalls || time.Now().Before(deadline)); i++ {
			if c.before != nil {
				if err := c.before(); err != nil {
					return nil, fmt.Errorf("%s: %w", c.name, err)
				}
			}
			var d time.Duration
			var err error
			for patience := time.Now().Add(5 * time.Second); ; {
				t0 := time.Now()
				err = c.call(i)
				d = time.Since(t0)
				if !errors.Is(err, errRetry) || time.Now().After(patience) {
					break
				}
			}
			lat = append(lat, d)
			if err != nil {
				row.Errors++
				if row.FirstError == "" {
					row.FirstError = err.Error()
				}
			}
		}
		slices.Sort(lat)
		pct := func(p float64) float64 {
			return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))].Microseconds()) / 1000
		}
		row.Calls, row.P50ms, row.P99ms = len(lat), pct(.5), pct(.99)
		fmt.Fprintf(os.Stderr, "  scale %8d notes  %-44s p50 %8.2f ms  p99 %8.2f ms  (%d calls, %d errors)\n", n, c.name, row.P50ms, row.P99ms, row.Calls, row.Errors)
		out = append(out, row)
	}
	return out, nil
}

// calls are the measured calls: every tool of the heavy agent (and two of
// the light one's), and the owner's pages.
func (sf *scaleFixture) calls(ctx context.Context, fx *fixture, st *store.Store) ([]scaleCall, error) {
	m := &sf.measured
	busy, quiet := m.busy, m.quiet
	ref := func(s *store.Session) map[string]any {
		return map[string]any{"session_type": s.Type, "session_id": s.PublicID}
	}
	with := func(s *store.Session, kv ...any) map[string]any {
		args := ref(s)
		for i := 0; i+1 < len(kv); i += 2 {
			args[kv[i].(string)] = kv[i+1]
		}
		return args
	}
	tool := func(a agent, name string, args func(i int) map[string]any) func(i int) error {
		return func(i int) error {
			return fx.rpc(fx.url, a.token, "tools/call", map[string]any{"name": name, "arguments": args(i)})
		}
	}
	fixed := func(args map[string]any) func(int) map[string]any { return func(int) map[string]any { return args } }
	var heavyHandle string
	if err := fx.pool.QueryRow(ctx, `SELECT handle FROM agent_profiles WHERE connection_id = $1`, m.heavy.connectionID).Scan(&heavyHandle); err != nil {
		return nil, err
	}
	retryKey := "scale-retry-" + sf.runID
	ownerSlug := store.OwnerSlug(m.ownerID)
	out := []scaleCall{
		{name: "set_status", call: tool(m.heavy, "set_status", func(i int) map[string]any {
			return map[string]any{"task": fmt.Sprintf("scale step %d", i), "repo": "osfoundry", "branch": "main"}
		})},
		{name: "post_session_note", call: tool(m.heavy, "post_session_note", func(i int) map[string]any {
			return with(busy, "subject", "Progress", "body", fmt.Sprintf("Scale note %d", i), "idempotency_key", fx.key("scale"))
		})},
		{name: "post_session_note retry", call: tool(m.heavy, "post_session_note", fixed(with(busy, "subject", "Retry", "body", "The same note", "idempotency_key", retryKey)))},
		{name: "reply_to_sender", call: tool(m.heavy, "reply_to_sender", func(i int) map[string]any {
			return with(busy, "to", ownerSlug, "subject", "Re", "body", fmt.Sprintf("Scale reply %d", i), "idempotency_key", fx.key("scale-r"))
		})},
		{name: "claim_connected_profile", call: tool(m.heavy, "claim_connected_profile", fixed(map[string]any{"handle": heavyHandle, "display_name": "Scale agent 0.0"}))},
		{name: "read_session_mail (busy session)", call: tool(m.heavy, "read_session_mail", fixed(with(busy, "limit", 10)))},
		{name: "read_session_mail (quiet session)", call: tool(m.heavy, "read_session_mail", fixed(with(quiet, "limit", 10)))},
		{name: "list_agents", call: tool(m.heavy, "list_agents", fixed(map[string]any{}))},
		{name: "list_sessions", call: tool(m.heavy, "list_sessions", fixed(map[string]any{}))},
		{name: "read_session_state", call: tool(m.heavy, "read_session_state", fixed(ref(busy)))},
		{name: "poll_resource_events", call: tool(m.heavy, "poll_resource_events", fixed(map[string]any{"resource_type": busy.Type, "resource_id": busy.PublicID,
			"after_sequence": 0, "limit": 10}))},
		{name: "set_status (agent invited to 5 sessions)", call: tool(m.light, "set_status", func(i int) map[string]any {
			return map[string]any{"task": fmt.Sprintf("scale step %d", i)}
		})},
		{name: "read_session_mail (agent invited to 5 sessions)", call: tool(m.light, "read_session_mail", fixed(with(busy, "limit", 10)))},
		{name: "tools/list (anonymous)", call: func(int) error { return fx.rpc(fx.url, "", "tools/list", map[string]any{}) }},
		{name: "initialize (anonymous)", call: func(int) error { return fx.rpc(fx.url, "", "initialize", initializeParams) }},
	}
	page := func(path string) func(int) error {
		return func(int) error { return sf.get(fx.url+path, http.StatusOK) }
	}
	var pollURL string
	loadPoll := func() error {
		u, _, err := sf.sessionPage(fx, busy.ID)
		pollURL = u
		return err
	}
	out = append(out,
		scaleCall{name: "page: projects list /", call: page("/")},
		scaleCall{name: "page: project", call: page(fmt.Sprintf("/projects/%d", busy.ProjectID))},
		scaleCall{name: "page: session (busy)", call: page(fmt.Sprintf("/sessions/%d", busy.ID))},
		scaleCall{name: "page: session (quiet)", call: page(fmt.Sprintf("/sessions/%d", quiet.ID))},
		scaleCall{name: "page: poll, unchanged", before: func() error {
			if pollURL == "" {
				return loadPoll()
			}
			return nil
		}, call: func(int) error { return sf.get(pollURL, http.StatusNoContent) }},
	)
	// The poll after a receipt: before each, the owner writes a note to the
	// whole session and the reader reads it (its first receipt on it,
	// announced); the poll carries the newest note and the receipts cursor
	// from before the read, so that it answers the receipt alone.
	var receiptURL string
	out = append(out, scaleCall{name: "page: poll after a receipt", before: func() error {
		var newestReceipt int64
		if err := fx.pool.QueryRow(ctx, `SELECT coalesce(max(r.id), 0) FROM note_receipts r WHERE r.session_id = $1 AND r.owner_note`, busy.ID).Scan(&newestReceipt); err != nil {
			return err
		}
		n, _, err := st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: m.workspaceID, SessionID: busy.ID, OwnerID: m.ownerID,
			Type: store.MessageNote, Subject: "To everyone", Body: "Owner's note " + fx.key("receipt")})
		if err != nil {
			return err
		}
		receiptURL = fmt.Sprintf("%s/sessions/%d/mail/poll?after=%d&receipts=%d", fx.url, busy.ID, n.ID, newestReceipt)
		_, _, err = st.ReadAgentMail(ctx, m.workspaceID, m.reader, busy.Type, busy.PublicID, n.ID+1, 1)
		return err
	}, call: func(int) error {
		err := sf.get(receiptURL, http.StatusOK)
		if err != nil && strings.Contains(err.Error(), "answered 204") {
			return errRetry // the receipt's notification has not reached the server yet
		}
		return err
	}})
	out = append(out,
		scaleCall{name: "page: unread stream, first event", call: func(int) error { return sf.firstEvent(fx, "/unread/stream", "unread") }},
		scaleCall{name: "page: busy session's stream, opened", call: func(int) error {
			return sf.firstEvent(fx, fmt.Sprintf("/sessions/%d/stream", busy.ID), "unread")
		}},
	)
	var csrf string
	var after int64
	out = append(out, scaleCall{name: "page: owner's note post", before: func() error {
		var err error
		_, csrf, err = sf.sessionPage(fx, busy.ID)
		if err != nil {
			return err
		}
		return fx.pool.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM notes WHERE session_id = $1`, busy.ID).Scan(&after)
	}, call: func(i int) error {
		form := url.Values{"_csrf": {csrf}, "type": {store.MessageNote}, "subject": {"Owner's note"},
			"body": {fmt.Sprintf("Scale owner note %d %s", i, fx.key("o"))}, "after": {strconv.FormatInt(after, 10)}}
		req, _ := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/sessions/%d/mail", fx.url, busy.ID), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("HX-Request", "true")
		return sf.do(req, http.StatusOK)
	}})
	out = append(out,
		scaleCall{name: "page: inbox", call: page("/inbox")},
		scaleCall{name: "page: search", call: page("/search?" + url.Values{"q": {"w100 w7"}}.Encode())},
	)
	return out, nil
}

var csrfValueRe = regexp.MustCompile(`name="_csrf" value="([^"]+)"`)

// sessionPage loads a session page as the owner and returns its poll URL
// and CSRF token.
func (sf *scaleFixture) sessionPage(fx *fixture, sessionID int64) (poll, csrf string, err error) {
	res, err := sf.measured.owner.Get(fmt.Sprintf("%s/sessions/%d", fx.url, sessionID))
	if err != nil {
		return "", "", err
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", "", fmt.Errorf("session page answered %d", res.StatusCode)
	}
	if m := pollRe.FindSubmatch(b); m != nil {
		poll = fx.url + strings.ReplaceAll(string(m[1]), "&amp;", "&")
	}
	if m := csrfValueRe.FindSubmatch(b); m != nil {
		csrf = string(m[1])
	}
	if poll == "" || csrf == "" {
		return "", "", errors.New("session page without its poll URL or CSRF token")
	}
	return poll, csrf, nil
}

// get fetches url as the owner and wants status.
func (sf *scaleFixture) get(url string, status int) error {
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	return sf.do(req, status)
}

func (sf *scaleFixture) do(req *http.Request, status int) error {
	res, err := sf.measured.owner.Do(req)
	if err != nil {
		return err
	}
	n, _ := io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != status {
		return fmt.Errorf("%s %s answered %d, want %d", req.Method, req.URL.Path, res.StatusCode, status)
	}
	if status == http.StatusOK && n == 0 {
		return fmt.Errorf("%s answered an empty page", req.URL.Path)
	}
	return nil
}

// firstEvent opens a stream as the owner and returns once its first event
// of kind has arrived, then closes it.
func (sf *scaleFixture) firstEvent(fx *fixture, path, kind string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, fx.url+path, nil)
	res, err := sf.measured.owner.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("%s answered %d", path, res.StatusCode)
	}
	br := bufio.NewReader(res.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return fmt.Errorf("%s: %w before an %s event", path, err, kind)
		}
		if strings.TrimSpace(line) == "event: "+kind {
			return nil
		}
	}
}

// printScale prints the scale section: each call at each note count, and
// the ratio of the last count's p50 to the first's.
func (r *report) printScale(w io.Writer) {
	if len(r.Scale) == 0 {
		return
	}
	var counts []int
	for _, d := range r.ScaleDatabase {
		counts = append(counts, d.Notes)
	}
	fmt.Fprintf(w, "\nscale: one call at a time over the spread (scale.go), p50 / p99 ms\n")
	for _, d := range r.ScaleDatabase {
		fmt.Fprintf(w, "  %d notes: database %.0f MB (notes %.0f MB, %d receipts %.0f MB), filled in %.0f s\n",
			d.Notes, d.DatabaseMB, d.NotesMB, d.Receipts, d.ReceiptsMB, d.FillSeconds)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	head := "call\t"
	for _, n := range counts {
		head += fmt.Sprintf("%d notes\t", n)
	}
	fmt.Fprintln(tw, head+"p50 ratio\t")
	var names []string
	byCall := map[string]map[int]scaleRow{}
	for _, x := range r.Scale {
		if byCall[x.Call] == nil {
			byCall[x.Call] = map[int]scaleRow{}
			names = append(names, x.Call)
		}
		byCall[x.Call][x.Notes] = x
	}
	for _, name := range names {
		line := name + "\t"
		for _, n := range counts {
			x := byCall[name][n]
			line += fmt.Sprintf("%.2f / %.2f\t", x.P50ms, x.P99ms)
		}
		first, last := byCall[name][counts[0]], byCall[name][counts[len(counts)-1]]
		ratio := "-"
		if first.P50ms > 0 {
			ratio = fmt.Sprintf("%.2f×", last.P50ms/first.P50ms)
		}
		fmt.Fprintln(tw, line+ratio+"\t")
	}
	tw.Flush()
	for _, x := range r.Scale {
		if x.FirstError != "" {
			fmt.Fprintf(w, "first error of scale %q at %d notes: %s\n", x.Call, x.Notes, x.FirstError)
		}
	}
}

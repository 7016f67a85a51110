package testfactory

import (
	"context"
	"fmt"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// Shape of the notes' timeline.
const (
	noteBatch   = 50_000
	noteSpacing = 2500 * time.Millisecond
	// farBehind: a far-behind agent stopped reading a tenth into its sessions.
	farBehind = 10
)

// timeline is how far the spread's notes are written.
type timeline struct {
	start   time.Time // the timeline ends here
	total   int       // its length in notes
	written int
	top     int64 // the newest note written
}

// Fill writes the spread's notes up to n in all, in id order along a
// timeline that ends now: nine in ten from an agent invited to the session
// (to the whole session; one in 50 a reply to the owner, one in 50 to
// another agent), one in ten from the owner (to the whole session, replies
// to an agent answering its latest note, analysis); their events; the read
// marks and receipts (reads.go); then VACUUM ANALYZE.
func (sp *Spread) Fill(ctx context.Context, n int) error {
	tl := &sp.tl
	if tl.total == 0 {
		tl.total = n
	}
	prevTop := tl.top
	start := time.Now()
	a := sp.arrays()
	for from := tl.written + 1; from <= n; from += noteBatch {
		to := min(n, from+noteBatch-1)
		if _, err := sp.db.Exec(ctx, notesSQL, a.sessions, a.workspaces, a.owners, a.invStart, a.invCount, a.invConn, a.invSlug, a.invName,
			from, to, tl.start, tl.total, noteSpacing.Seconds(), a.busy, a.quiet, a.ownerSlugs, a.ownerNames); err != nil {
			return fmt.Errorf("testfactory: notes: %w", err)
		}
		sp.opts.Log("%d of %d notes (%.0f s)", to, n, time.Since(start).Seconds())
	}
	if err := sp.db.QueryRow(ctx, `SELECT coalesce(max(id), 0) FROM notes WHERE session_id = ANY($1)`, a.sessions).Scan(&tl.top); err != nil {
		return fmt.Errorf("testfactory: newest note: %w", err)
	}
	when, payload := store.NotePostedSQL("n")
	steps := []step{
		// A reply answers the latest note before it of its session.
		{"replies' parents", `
			UPDATE notes r SET in_reply_to = (SELECT p.id FROM notes p WHERE p.session_id = r.session_id AND p.id < r.id
				ORDER BY p.session_id, p.id DESC LIMIT 1)
			WHERE r.session_id = ANY($1) AND r.id > $2 AND r.message_type = 'reply'`, nil},
		{"events", `
			INSERT INTO resource_events (session_id, sequence, kind, note_id, payload, created_at)
			SELECT n.session_id, s.last_event_seq + row_number() OVER (PARTITION BY n.session_id ORDER BY n.id), 'note_posted', n.id,
				` + payload + `, n.created_at
			FROM notes n JOIN sessions s ON s.id = n.session_id
			WHERE n.session_id = ANY($1) AND n.id > $2 AND ` + when, nil},
		{"sequences", `
			UPDATE sessions s SET last_event_seq = e.top
			FROM (SELECT session_id, max(sequence) AS top FROM resource_events WHERE session_id = ANY($1) GROUP BY session_id) e
			WHERE s.id = e.session_id AND s.last_event_seq < e.top AND $2::bigint >= 0`, nil},
	}
	steps = append(steps, sp.readSteps(a)...)
	for _, s := range steps {
		t := time.Now()
		if _, err := sp.db.Exec(ctx, s.sql, append([]any{a.sessions, prevTop}, s.args...)...); err != nil {
			return fmt.Errorf("testfactory: %s: %w", s.what, err)
		}
		sp.opts.Log("%s (%.0f s)", s.what, time.Since(t).Seconds())
	}
	t := time.Now()
	if err := Vacuum(ctx, sp.db); err != nil {
		return err
	}
	sp.opts.Log("vacuum analyze (%.0f s)", time.Since(t).Seconds())
	tl.written = n
	return nil
}

// step is one set-based statement of a fill over the spread's sessions ($1)
// and the notes written since the last fill (id > $2), args from $3 on.
type step struct {
	what string
	sql  string
	args []any
}

// notesSQL writes notes $9 to $10 of the timeline: 7 in 10 to a busy
// session ($14), the rest to a quiet one ($15), by a prime stride over
// g / 10 so that each kind of note (g % 10) reaches every session; senders
// among the session's invited agents ($4, $5: a range of $6 to $8) or its
// owner ($3, $16 the owner's slug, $17 name), dated $11 - ($12 - g) × $13
// seconds.
const notesSQL = `
	INSERT INTO notes (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id, sender_slug, sender_name,
		recipient_slug, message_type, subject, body, created_at)
	SELECT ($2::bigint[])[x.s], ($1::bigint[])[x.s], k.kind,
		CASE WHEN k.kind = 'owner' THEN ($3::bigint[])[x.s] END,
		CASE WHEN k.kind = 'agent' THEN ($6::bigint[])[x.a] END,
		CASE WHEN k.kind = 'agent' THEN ($7::text[])[x.a] ELSE ($16::text[])[x.s] END,
		CASE WHEN k.kind = 'agent' THEN ($8::text[])[x.a] ELSE ($17::text[])[x.s] END,
		k.recipient, k.type,
		'Step ' || g || ': w' || floor(3000 * random() ^ 3)::int,
		(SELECT string_agg('w' || floor(3000 * random() ^ 3)::int, ' ') FROM generate_series(1, 20 + g % 25)),
		$11::timestamptz - ($12::bigint - g) * make_interval(secs => $13::float8)
	FROM generate_series($9::int, $10::int) g
	CROSS JOIN LATERAL (SELECT CASE WHEN g % 10 < 7 THEN ($14::int[])[1 + ((g::bigint / 10) * 7919 + g % 10) % cardinality($14::int[])]
		ELSE ($15::int[])[1 + ((g::bigint / 10) * 104729 + g % 10) % cardinality($15::int[])] END AS s) x0
	CROSS JOIN LATERAL (SELECT x0.s, ($4::int[])[x0.s] AS first, ($5::int[])[x0.s] AS cnt) x1
	CROSS JOIN LATERAL (SELECT x1.s, x1.first + (g / 3) % greatest(x1.cnt, 1) AS a,
		x1.first + (g / 3 + 1) % greatest(x1.cnt, 1) AS other, x1.cnt) x
	CROSS JOIN LATERAL (SELECT
		CASE WHEN g % 10 = 3 OR x.cnt = 0 THEN 'owner' ELSE 'agent' END AS kind,
		CASE WHEN g % 10 = 3 OR x.cnt = 0 THEN
			CASE WHEN (g / 10) % 10 BETWEEN 4 AND 7 AND x.cnt > 0 THEN ($7::text[])[x.a] END
		WHEN g % 50 = 7 THEN ($16::text[])[x.s]
		WHEN g % 50 = 17 AND x.cnt > 1 THEN ($7::text[])[x.other] END AS recipient,
		CASE WHEN g % 10 = 3 OR x.cnt = 0 THEN
			CASE WHEN (g / 10) % 10 BETWEEN 4 AND 7 AND x.cnt > 0 THEN 'reply' WHEN (g / 10) % 10 = 8 THEN 'analysis' ELSE 'note' END
		WHEN g % 50 = 7 OR (g % 50 = 17 AND x.cnt > 1) THEN 'reply' ELSE 'note' END AS type) k`

// arrays is the spread as notesSQL's parameters: per session (1-based in
// SQL) its id, workspace, owner and invited range; per invitation its
// agent.
type arrays struct {
	sessions, workspaces, owners []int64
	ownerSlugs, ownerNames       []string
	invStart, invCount           []int32
	invConn                      []int64
	invSlug, invName             []string
	busy, quiet                  []int32
	busyIDs, neverRead, keeping  []int64
}

func (sp *Spread) arrays() arrays {
	var a arrays
	for i, s := range sp.Sessions {
		o := sp.Owners[s.Owner]
		a.sessions, a.workspaces, a.owners = append(a.sessions, s.ID), append(a.workspaces, o.WorkspaceID), append(a.owners, o.ID)
		a.ownerSlugs, a.ownerNames = append(a.ownerSlugs, store.OwnerSlug(o.ID)), append(a.ownerNames, o.Name)
		a.invStart, a.invCount = append(a.invStart, int32(len(a.invConn)+1)), append(a.invCount, int32(len(s.Invited)))
		for _, ag := range s.Invited {
			p := sp.Agents[ag].Profile
			a.invConn, a.invSlug, a.invName = append(a.invConn, p.ConnectionID), append(a.invSlug, p.SenderSlug), append(a.invName, p.DisplayName)
		}
		if s.Busy {
			a.busy, a.busyIDs = append(a.busy, int32(i+1)), append(a.busyIDs, s.ID)
		} else {
			a.quiet = append(a.quiet, int32(i+1))
		}
		if s.NeverRead {
			a.neverRead = append(a.neverRead, s.ID)
		}
	}
	for _, ag := range sp.Agents {
		if ag.KeepsUp {
			a.keeping = append(a.keeping, ag.ConnectionID)
		}
	}
	return a
}

package store

import (
	"context"
	"strconv"
)

// What a connection's agent reads, what counts as mail addressed to it, and
// how much of that it has not read yet. Each rule is one SQL
// condition on notes n, written once here and used by every statement that
// needs it: the token check of every tool call (the unread hint), and
// read_session_mail (the page, its receipts, which of its notes are
// addressed to the reader, and the hint it returns).

// readableBy is what read_session_mail shows a connection in a session it is
// invited to: notes to the whole session, replies to its sender slug, and
// the notes it posted; never analysis. conn and slug are SQL expressions of
// the connection's id and sender slug (NULL before a profile is claimed).
func readableBy(conn, slug string) string {
	return `(n.message_type <> 'analysis' AND (n.recipient_slug IS NULL OR n.recipient_slug = ` + slug +
		` OR n.sender_connection_id = ` + conn + `))`
}

// receiptFor is which of those notes get a read receipt when
// read_session_mail returns them: all but the connection's own.
func receiptFor(conn string) string {
	return `n.sender_connection_id IS DISTINCT FROM ` + conn
}

// addressedTo is the mail addressed to a connection, what its unread hint
// counts: replies to its sender slug (from an owner or another agent) and
// owners' notes to the whole session; never analysis, never its own notes,
// and not other agents' notes to the whole session. Such notes are all in
// the partial index notes_addressed_idx (migrations/008), whose predicate
// (addressable) the condition repeats so that the planner can use it.
func addressedTo(conn, slug string) string {
	return `(` + addressable + ` AND n.sender_connection_id IS DISTINCT FROM ` + conn +
		` AND (n.recipient_slug = ` + slug + ` OR (n.recipient_slug IS NULL AND n.sender_kind = 'owner')))`
}

// addressable is the predicate of notes_addressed_idx: a note that can be
// addressed to some agent (a reply to a slug, or an owner's note).
const addressable = `n.message_type <> 'analysis' AND (n.recipient_slug IS NOT NULL OR n.sender_kind = 'owner')`

// MaxUnreadListed bounds the sessions an unread hint lists (the newest
// unread first); its session count counts every session.
const MaxUnreadListed = 10

// MaxUnreadCounted is where a connection's unread count stops: past it the
// hint has "more" (Unread.More), and counting costs the same however far
// behind the connection is and however many sessions it is invited to.
const MaxUnreadCounted = 100

// Unread is a connection's unread mail: in each session it is currently
// invited to, the notes addressed to it (addressedTo) newer than the newest
// note read_session_mail has returned to it there (agent_mail_reads).
type Unread struct {
	// Total counts the unread notes, the newest session's first, up to
	// MaxUnreadCounted; More says there are more.
	Total int
	More  bool
	// SessionCount is how many sessions hold them.
	SessionCount int
	// Sessions are at most MaxUnreadListed of them, the one with the newest
	// unread note first.
	Sessions []UnreadSession
}

// UnreadSession is the unread count of one session.
type UnreadSession struct {
	SessionType string
	SessionID   string // the public id agents use
	// Count is what the count reached in the session (at least 1); More
	// says it stopped there, at MaxUnreadCounted for the whole hint.
	Count int
	More  bool
}

// unreadAbove is the mail addressed to the connection in session above
// mark: a range of notes_addressed_idx read newest first (a row comparison,
// which only that two-column index can use).
func unreadAbove(conn, slug, session, mark string) string {
	return `n.session_id = ` + session + ` AND (n.session_id, n.id) > (` + session + `, ` + mark + `) AND ` + addressedTo(conn, slug)
}

// unreadSQL selects one row (total, sessions, types, ids, counts, cut): a
// connection's unread mail (Unread), to scan into unreadTargets. conn and
// slug are SQL expressions (see readableBy); seenThrough, of the session
// i.session_id, is a note id through which its notes count as read besides
// the mark, such as the top of the page a read is returning ("0" for none).
// a finds, per invitation, the newest unread note (one index entry); w
// counts unread notes down the sessions in that order and stops at
// MaxUnreadCounted+1 in all, so a call reads at most that many entries
// besides one per invitation; l looks up the listed sessions' public ids one
// by one (OFFSET 0). cut is the position of the first session whose count
// stopped (0: none did).
func unreadSQL(conn, slug, seenThrough string) string {
	listed := strconv.Itoa(MaxUnreadListed)
	counted := strconv.Itoa(MaxUnreadCounted)
	return `
		SELECT least(w.walked, ` + counted + `), a.sessions, coalesce(l.types, '{}'), coalesce(l.ids, '{}'), coalesce(l.counts, '{}'),
			CASE WHEN w.walked > ` + counted + ` THEN w.last ELSE 0 END
		FROM (
			SELECT count(*)::int AS sessions, array_agg(u.session_id ORDER BY u.newest DESC) AS ids,
				array_agg(u.mark ORDER BY u.newest DESC) AS marks
			FROM (
				SELECT i.session_id, k.mark, x.newest
				FROM invitations i
				LEFT JOIN agent_mail_reads m ON m.session_id = i.session_id AND m.connection_id = i.connection_id
				CROSS JOIN LATERAL (SELECT greatest(coalesce(m.read_through, 0), ` + seenThrough + `) AS mark) k
				CROSS JOIN LATERAL (
					SELECT n.id AS newest FROM notes n WHERE ` + unreadAbove(conn, slug, "i.session_id", "k.mark") + `
					ORDER BY n.session_id DESC, n.id DESC LIMIT 1
				) x
				WHERE i.connection_id = ` + conn + `
			) u
		) a
		CROSS JOIN LATERAL (
			SELECT count(*)::int AS walked, coalesce(max(c.o), 0)::int AS last, array_agg(c.o) AS os FROM (
				SELECT l.o FROM unnest(a.ids, a.marks) WITH ORDINALITY AS l(id, mark, o)
				CROSS JOIN LATERAL (
					SELECT FROM notes n WHERE ` + unreadAbove(conn, slug, "l.id", "l.mark") + `
					ORDER BY n.session_id DESC, n.id DESC LIMIT ` + counted + ` + 1
				) n
				LIMIT ` + counted + ` + 1
			) c
		) w
		CROSS JOIN LATERAL (
			SELECT array_agg(s.session_type ORDER BY l.o) AS types, array_agg(s.public_id ORDER BY l.o) AS ids,
				array_agg(coalesce(cardinality(array_positions(w.os, l.o)), 0)::int ORDER BY l.o) AS counts
			FROM unnest(a.ids[1:` + listed + `]) WITH ORDINALITY AS l(id, o)
			CROSS JOIN LATERAL (SELECT s.session_type, s.public_id FROM sessions s WHERE s.id = l.id OFFSET 0) s
		) l`
}

// unreadTargets are the scan targets of unreadSQL's six columns.
type unreadTargets struct {
	u      Unread
	types  []string
	ids    []string
	counts []int32
	cut    int32
}

func (t *unreadTargets) targets() []any {
	return []any{&t.u.Total, &t.u.SessionCount, &t.types, &t.ids, &t.counts, &t.cut}
}

func (t *unreadTargets) unread() Unread {
	u := t.u
	u.More = t.cut > 0
	u.Sessions = make([]UnreadSession, len(t.types))
	for i := range t.types {
		more := u.More && int32(i+1) >= t.cut
		u.Sessions[i] = UnreadSession{SessionType: t.types[i], SessionID: t.ids[i], Count: max(min(int(t.counts[i]), MaxUnreadCounted), 1), More: more}
	}
	return u
}

// countUnreadSQL is CountUnread's statement, $1 the connection.
var countUnreadSQL = `SELECT u.* FROM connections c CROSS JOIN LATERAL (` + unreadSQL("c.id", "c.sender_slug", "0") + `) u
	WHERE c.id = $1`

// CountUnread counts a connection's unread mail (Unread), as the token's
// check of a call does: for a call whose check did not count it.
func (s *Store) CountUnread(ctx context.Context, connectionID int64) (Unread, error) {
	var u unreadTargets
	if err := s.pool.QueryRow(ctx, countUnreadSQL, connectionID).Scan(u.targets()...); err != nil {
		return Unread{}, wrap("count unread", err)
	}
	return u.unread(), nil
}

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
// unread first); its total counts every session.
const MaxUnreadListed = 10

// MaxUnreadCounted is where a session's unread count stops: past it, the
// session has "more" (UnreadSession.More), and the count costs the same
// however far behind the connection is (it reads at most this many index
// entries of the session, plus one to know there are more).
const MaxUnreadCounted = 100

// Unread is a connection's unread mail: in each session it is currently
// invited to, the notes addressed to it (addressedTo) newer than the newest
// note read_session_mail has returned to it there (agent_mail_reads).
type Unread struct {
	// Total counts the unread notes of every session, each counted up to
	// MaxUnreadCounted; More says that some session holds more than that.
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
	// Count is at most MaxUnreadCounted; More says there are more.
	Count int
	More  bool
}

// unreadSQL selects one row (total, sessions, types, ids, counts, more): a
// connection's unread mail (Unread), to scan into unreadTargets. conn and
// slug are SQL expressions (see readableBy); seen is a condition on n naming
// notes to count as read besides, such as those below the page a read is
// returning ("false" for none). Per invitation it reads the range of
// notes_addressed_idx above read_through, index-only (the bound is a row
// comparison, which only that two-column index can use: with "id >
// read_through" a generic plan may prefer walking the primary key from the
// mark through every newer note of every session): a connection that keeps
// up costs one empty index probe per invitation, one that never reads one
// index entry per note addressed to anyone in its sessions, never the
// sessions' other mail. Each session's count stops past MaxUnreadCounted
// (the newest entries first, down the index), so a connection far behind
// costs at most that many entries per invitation; counts carries a
// session's count up to MaxUnreadCounted+1 (more), total the sum of the
// counts up to MaxUnreadCounted, more whether any session has more. The
// sessions' public ids are looked up one by one (OFFSET 0 keeps it so): a
// generic plan otherwise hashes every session of the server for them.
func unreadSQL(conn, slug, seen string) string {
	listed := strconv.Itoa(MaxUnreadListed)
	counted := strconv.Itoa(MaxUnreadCounted)
	return `
		SELECT coalesce(sum(least(u.count, ` + counted + `)), 0)::int, count(*)::int,
			coalesce((array_agg(s.session_type ORDER BY u.newest DESC))[1:` + listed + `], '{}'),
			coalesce((array_agg(s.public_id ORDER BY u.newest DESC))[1:` + listed + `], '{}'),
			coalesce((array_agg(u.count ORDER BY u.newest DESC))[1:` + listed + `], '{}'),
			coalesce(bool_or(u.count > ` + counted + `), false)
		FROM (
			SELECT i.session_id, x.count, x.newest
			FROM invitations i
			LEFT JOIN agent_mail_reads m ON m.session_id = i.session_id AND m.connection_id = i.connection_id
			CROSS JOIN LATERAL (
				SELECT count(*)::int AS count, max(a.id) AS newest FROM (
					SELECT n.id FROM notes n
					WHERE n.session_id = i.session_id AND (n.session_id, n.id) > (i.session_id, coalesce(m.read_through, 0))
						AND ` + addressedTo(conn, slug) + `
						AND NOT (` + seen + `)
					ORDER BY n.session_id DESC, n.id DESC LIMIT ` + counted + ` + 1
				) a
			) x
			WHERE i.connection_id = ` + conn + ` AND x.count > 0
		) u
		CROSS JOIN LATERAL (SELECT s.session_type, s.public_id FROM sessions s WHERE s.id = u.session_id OFFSET 0) s`
}

// unreadTargets are the scan targets of unreadSQL's six columns.
type unreadTargets struct {
	u      Unread
	types  []string
	ids    []string
	counts []int32
}

func (t *unreadTargets) targets() []any {
	return []any{&t.u.Total, &t.u.SessionCount, &t.types, &t.ids, &t.counts, &t.u.More}
}

func (t *unreadTargets) unread() Unread {
	u := t.u
	u.Sessions = make([]UnreadSession, len(t.types))
	for i := range t.types {
		n := int(t.counts[i])
		u.Sessions[i] = UnreadSession{SessionType: t.types[i], SessionID: t.ids[i], Count: min(n, MaxUnreadCounted), More: n > MaxUnreadCounted}
	}
	return u
}

// countUnreadSQL is CountUnread's statement, $1 the connection.
var countUnreadSQL = `SELECT u.* FROM connections c CROSS JOIN LATERAL (` + unreadSQL("c.id", "c.sender_slug", "false") + `) u
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

package store

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// unreadCounted is (count, newest) of the session's notes unreadBy the owner that meet also,
// counting at most MaxUnreadCounted index-only entries of notes_unread_idx.
func unreadCounted(owner, session, also string) string {
	return `SELECT count(*)::int AS count, coalesce(max(c.id), 0) AS newest FROM (
		SELECT n.id FROM notes n WHERE ` + unreadBy(owner, session) + ` AND ` + also + `
		ORDER BY n.session_id DESC, n.id DESC LIMIT ` + strconv.Itoa(MaxUnreadCounted) + `) c`
}

func unreadCount(owner, session string) string {
	return `(SELECT u.count FROM (` + unreadCounted(owner, session, "true") + `) u)`
}

// LastReadNote returns the id of the newest note the owner has seen in the
// session (0 when never opened).
func (s *Store) LastReadNote(ctx context.Context, ownerID, sessionID int64) (int64, error) {
	var id int64
	err := s.pool.QueryRow(ctx, `
		SELECT coalesce((SELECT last_read_note_id FROM note_reads WHERE owner_id = $1 AND session_id = $2), 0)`,
		ownerID, sessionID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("store: last read note: %w", err)
	}
	return id, nil
}

// unreadBy is the one rule of what an owner has not read: newer than their read mark in the
// session, not written by them, bounded as a range of notes_session_idx (docs/performance.md).
func unreadBy(owner, session string) string {
	return inSession(session) + ` AND n.sender_owner_id IS DISTINCT FROM ` + owner + `
		AND (n.session_id, n.id) > (` + session + `, coalesce((SELECT r.last_read_note_id FROM note_reads r
			WHERE r.owner_id = ` + owner + ` AND r.session_id = ` + session + `), 0))`
}

// anyUnreadBy is one index-only probe for a note above the owner's mark in the session, kept one
// probe per session by OFFSET 0.
func anyUnreadBy(owner, session string) string {
	return `EXISTS (SELECT 1 FROM notes x WHERE x.session_id BETWEEN ` + session + ` AND ` + session + `
		AND (x.session_id, x.id) > (` + session + `, coalesce((SELECT r.last_read_note_id
		FROM note_reads r WHERE r.owner_id = ` + owner + ` AND r.session_id = ` + session + `), 0)) OFFSET 0)`
}

// SessionUnread is how many notes of one session an owner has not read.
type SessionUnread struct {
	SessionID int64
	ProjectID int64
	Unread    int
	// Inbox counts those of them in the owner's inbox (forOwners), and
	// InboxNewest is the newest of those (0 when none).
	Inbox       int
	InboxNewest int64
}

var unreadMailSQL = `
	SELECT s.id, s.project_id, u.count, i.inbox, i.inbox_newest
	FROM sessions s CROSS JOIN LATERAL (` + unreadCounted("$2", "s.id", "true") + `) u
	CROSS JOIN LATERAL (` + unreadCounted("$2", "s.id", forOwners) + `) i(inbox, inbox_newest)
	WHERE s.workspace_id = $1 AND ` + anyUnreadBy("$2", "s.id") + ` AND u.count > 0
	ORDER BY s.id`

// UnreadMail returns the owner's unread count of every session of the workspace that has unread
// notes.
func (s *Store) UnreadMail(ctx context.Context, workspaceID, ownerID int64) ([]SessionUnread, error) {
	rows, err := s.pool.Query(ctx, unreadMailSQL, workspaceID, ownerID)
	if err != nil {
		return nil, fmt.Errorf("store: unread mail: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SessionUnread, error) {
		var u SessionUnread
		err := r.Scan(&u.SessionID, &u.ProjectID, &u.Unread, &u.Inbox, &u.InboxNewest)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: unread mail: %w", err)
	}
	return out, nil
}

// OwnerSessionUnread is one owner's unread count of one session.
type OwnerSessionUnread struct {
	OwnerID int64
	SessionUnread
}

var unreadMailInSQL = `
	SELECT o.id, s.id, s.project_id, u.count, i.inbox, i.inbox_newest
	FROM unnest($1::bigint[]) o(id) CROSS JOIN sessions s
	CROSS JOIN LATERAL (` + unreadCounted("o.id", "s.id", "true") + `) u
	CROSS JOIN LATERAL (` + unreadCounted("o.id", "s.id", forOwners) + `) i(inbox, inbox_newest)
	WHERE s.id = ANY($2) AND ` + anyUnreadBy("o.id", "s.id") + ` AND u.count > 0
	ORDER BY o.id, s.id`

// UnreadMailIn returns, for each of the owners, their unread count of each of the sessions that has
// unread notes (as UnreadMail counts them).
func (s *Store) UnreadMailIn(ctx context.Context, ownerIDs, sessionIDs []int64) ([]OwnerSessionUnread, error) {
	rows, err := s.pool.Query(ctx, unreadMailInSQL, ownerIDs, sessionIDs)
	if err != nil {
		return nil, fmt.Errorf("store: unread mail in: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (OwnerSessionUnread, error) {
		var u OwnerSessionUnread
		err := r.Scan(&u.OwnerID, &u.SessionID, &u.ProjectID, &u.Unread, &u.Inbox, &u.InboxNewest)
		return u, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: unread mail in: %w", err)
	}
	return out, nil
}

// MarkMailRead moves the owner's read mark of the session forward to noteID and returns the
// previous mark, in one statement; it writes only the mark, so it commits without waiting for the
// WAL flush (readsCommitAsync).
func (s *Store) MarkMailRead(ctx context.Context, ownerID, sessionID, noteID int64) (previous int64, err error) {
	var notified *string
	err = s.pool.QueryRow(ctx, `
		WITH old AS (SELECT coalesce((SELECT last_read_note_id FROM note_reads WHERE owner_id = $1 AND session_id = $2), 0) AS id
			WHERE `+readsCommitAsync+`),
		up AS (
			-- Written only when the mark moves: a page view that moves nothing
			-- writes nothing (not even a row lock) and waits for no WAL flush.
			INSERT INTO note_reads AS r (owner_id, session_id, last_read_note_id)
			SELECT $1, $2, $3::bigint FROM old WHERE $3::bigint > old.id
			ON CONFLICT (owner_id, session_id) DO UPDATE
			SET last_read_note_id = greatest(r.last_read_note_id, EXCLUDED.last_read_note_id)
			WHERE r.last_read_note_id < EXCLUDED.last_read_note_id)
		SELECT old.id, CASE WHEN $3::bigint > old.id THEN pg_notify($4, $1::bigint::text)::text END FROM old`,
		ownerID, sessionID, noteID, ReadsChannel).Scan(&previous, &notified)
	if err != nil {
		return 0, fmt.Errorf("store: mark mail read: %w", err)
	}
	return previous, nil
}

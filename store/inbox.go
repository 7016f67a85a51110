package store

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// forOwners is the one rule of what the inbox holds, as a condition on notes n.
const forOwners = `(n.message_type <> 'analysis' AND (n.message_type = 'question' OR is_owner_slug(n.recipient_slug)
	OR (n.sender_kind = 'agent' AND n.recipient_slug IS NULL)))`

// InboxPageSize is how many notes an inbox page shows.
const InboxPageSize = 50

// InboxFilter narrows the inbox; the zero value is everything.
type InboxFilter struct {
	// Unread keeps the notes the owner has not read.
	Unread bool
	// Questions keeps the questions waiting for an answer (open ones).
	Questions bool
	// Mine keeps the replies to the owner's own sender slug.
	Mine bool
	// ProjectID keeps one project's notes, AgentID one connection's (0: all).
	ProjectID, AgentID int64
	// Before and After bound the note ids (0: no bound).
	Before, After int64
}

// InboxNote is a note of the inbox with where it is and whether the owner
// has read it.
type InboxNote struct {
	Note
	SessionTitle string
	ProjectID    int64
	ProjectName  string
	Unread       bool
}

const inboxFilters = forOwners + ` AND n.sender_owner_id IS DISTINCT FROM $2 AND n.id < $3 AND n.id > $4
	AND ($5::bigint = 0 OR s.project_id = $5) AND ($6::bigint = 0 OR n.sender_connection_id = $6)
	AND (NOT $7::boolean OR n.recipient_slug = $8) AND (NOT $9::boolean OR (n.message_type = '` + MessageQuestion + `'
		AND EXISTS (SELECT 1 FROM questions wq WHERE wq.note_id = n.id AND wq.state = '` + QuestionOpen + `')))`

var inboxColumns = listedColumns + `, s.title, s.project_id, p.name`

// The workspace is a range and the order names it, as inSession does for a session.
var inboxAll = `
	SELECT ` + inboxColumns + `,
		n.id > coalesce((SELECT r.last_read_note_id FROM note_reads r WHERE r.owner_id = $2 AND r.session_id = n.session_id), 0)
	FROM notes n ` + listedJoin + `
	JOIN sessions s ON s.id = n.session_id
	JOIN projects p ON p.id = s.project_id
	WHERE n.workspace_id BETWEEN $1 AND $1 AND ` + inboxFilters + `
	ORDER BY n.workspace_id DESC, n.id DESC LIMIT $10`

// inboxUnread reads only what is unread: per session of the workspace, the
// range of its notes above the owner's read mark (unreadBy), so that an
// owner who keeps up costs one index probe per session, not a walk of
// everything read.
var inboxUnread = `
	SELECT ` + inboxColumns + `, true
	FROM sessions s
	JOIN projects p ON p.id = s.project_id
	CROSS JOIN LATERAL (
		SELECT n.* FROM notes n
		WHERE ` + unreadBy("$2", "s.id") + ` AND ` + inboxFilters + `
		ORDER BY n.session_id, n.id DESC LIMIT $10
	) n ` + listedJoin + `
	WHERE s.workspace_id = $1 AND ($5::bigint = 0 OR s.project_id = $5)
	ORDER BY n.id DESC LIMIT $10`

// Inbox returns a page of the owner's inbox (forOwners, narrowed by f), newest first.
func (s *Store) Inbox(ctx context.Context, workspaceID, ownerID int64, f InboxFilter, limit int) ([]InboxNote, error) {
	sql := inboxAll
	if f.Unread {
		sql = inboxUnread
	}
	rows, err := s.pool.Query(ctx, sql, workspaceID, ownerID, pageBefore(f.Before), f.After, f.ProjectID, f.AgentID,
		f.Mine, OwnerSlug(ownerID), f.Questions, limit+1)
	if err != nil {
		return nil, fmt.Errorf("store: inbox: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (InboxNote, error) {
		var in InboxNote
		n, err := scanListedNote(r, &in.SessionTitle, &in.ProjectID, &in.ProjectName, &in.Unread)
		if err == nil {
			in.Note = *n
		}
		return in, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: inbox: %w", err)
	}
	return out, nil
}

// MarkAllRead moves the owner's read mark of every session of the workspace (of one project when
// projectID is not 0) to its newest note, in one statement, and returns how many marks moved.
func (s *Store) MarkAllRead(ctx context.Context, workspaceID, ownerID, projectID int64) (int, error) {
	var moved int
	var notified *string
	err := s.pool.QueryRow(ctx, `
		WITH tops AS (
			SELECT s.id, (SELECT max(n.id) FROM notes n WHERE n.session_id = s.id) AS top
			FROM sessions s WHERE s.workspace_id = $1 AND ($3::bigint = 0 OR s.project_id = $3)
		), up AS (
			INSERT INTO note_reads AS r (owner_id, session_id, last_read_note_id)
			SELECT $2, t.id, t.top FROM tops t
			WHERE t.top IS NOT NULL AND EXISTS (SELECT 1 FROM owners o WHERE o.id = $2 AND o.workspace_id = $1)
			ON CONFLICT (owner_id, session_id) DO UPDATE
			SET last_read_note_id = greatest(r.last_read_note_id, EXCLUDED.last_read_note_id)
			WHERE r.last_read_note_id < EXCLUDED.last_read_note_id
			RETURNING 1
		)
		SELECT m.n, CASE WHEN m.n > 0 THEN pg_notify($4, $2::bigint::text)::text END
		FROM (SELECT count(*)::int AS n FROM up) m`, workspaceID, ownerID, projectID, ReadsChannel).Scan(&moved, &notified)
	if err != nil {
		return 0, fmt.Errorf("store: mark all read: %w", err)
	}
	return moved, nil
}

// AgentSender is an agent that can appear as a note's sender: a connection
// of the workspace with a claimed profile.
type AgentSender struct {
	ConnectionID int64
	Handle       string
	DisplayName  string
}

// ListAgentSenders returns the workspace's agents with a claimed profile,
// by name: what the inbox's "from" filter offers.
func (s *Store) ListAgentSenders(ctx context.Context, workspaceID int64) ([]AgentSender, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT p.connection_id, p.handle, p.display_name FROM agent_profiles p
		WHERE p.workspace_id = $1 ORDER BY lower(p.display_name), p.handle`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("store: agent senders: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[AgentSender])
	if err != nil {
		return nil, fmt.Errorf("store: agent senders: %w", err)
	}
	return out, nil
}

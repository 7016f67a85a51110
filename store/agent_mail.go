package store

import (
	"context"
	"fmt"
	"time"
)

// MaxMailPage is the largest page read_session_mail returns.
const MaxMailPage = 20

// AgentMailNote is a note as read_session_mail returns it to a connection.
type AgentMailNote struct {
	Note
	// Addressed is whether the note is addressed to the connection (a reply to its sender slug, or
	// an owner's note to the whole session).
	Addressed bool
	// DeliveredAt is when the note was put into the agent's context (by a
	// hook or a channel, before this read), nil when it never was.
	DeliveredAt *time.Time
}

// The session row is locked before receipts take their ids, as insertNote does for notes, so that a
// session's receipts become visible in id order and the owners' pages can poll with "receipt id >
// last seen".
var readAgentMailSQL = `
	WITH target AS (
		SELECT s.id, i.role, c.sender_slug
		FROM sessions s
		LEFT JOIN invitations i ON i.session_id = s.id AND i.connection_id = $2
		LEFT JOIN connections c ON c.id = i.connection_id
		WHERE s.workspace_id = $1 AND s.session_type = $3 AND s.public_id = $4 AND ` + readsCommitAsync + `
	), page AS (
		SELECT n.* FROM target CROSS JOIN LATERAL (
			SELECT * FROM notes n
			WHERE target.role IS NOT NULL AND ` + inSession("target.id") + ` AND ` + readableBy("$2", "target.sender_slug") + `
				AND n.id < $5
			-- Ordered as notes_session_idx (session_id, id DESC) is: see inSession.
			ORDER BY n.session_id, n.id DESC
			LIMIT $6 + 1
		) n
	), shown AS (
		SELECT * FROM page ORDER BY id DESC LIMIT $6
	), fresh AS (
		SELECT n.id, n.session_id, n.sender_kind FROM shown n
		WHERE ` + receiptFor("$2") + `
			AND NOT EXISTS (SELECT 1 FROM note_receipts r WHERE r.note_id = n.id AND r.connection_id = $2)
	), locked AS (
		SELECT s.id FROM sessions s WHERE s.id = (SELECT f.session_id FROM fresh f LIMIT 1) FOR NO KEY UPDATE
	), receipts AS (
		INSERT INTO note_receipts (note_id, connection_id, session_id, owner_note)
		SELECT f.id, $2, f.session_id, f.sender_kind = 'owner' FROM fresh f CROSS JOIN locked ORDER BY f.id
		ON CONFLICT (note_id, connection_id) DO NOTHING
		RETURNING note_id
	), notified AS (
		SELECT count(pg_notify($7, f.session_id::text || ':' || f.id::text)) AS n
		FROM receipts r JOIN fresh f ON f.id = r.note_id
		WHERE f.sender_kind = 'owner'
	), mark AS (
		-- Only a mark that moves is written: an upsert that finds the mark
		-- already there would lock its row even when it changes nothing, and a
		-- row lock makes the read a write that waits for a WAL flush.
		INSERT INTO agent_mail_reads AS m (session_id, connection_id, read_through)
		SELECT target.id, $2, top.id FROM target, (SELECT max(id) AS id FROM shown) top
		WHERE top.id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM agent_mail_reads r
			WHERE r.session_id = target.id AND r.connection_id = $2 AND r.read_through >= top.id)
		ON CONFLICT (session_id, connection_id) DO UPDATE SET read_through = greatest(m.read_through, EXCLUDED.read_through)
		WHERE m.read_through < EXCLUDED.read_through
	)
	SELECT target.role, (SELECT notified.n FROM notified), u.*, ` + noteColumns + `,
		coalesce(` + addressedTo("$2", "target.sender_slug") + `, false),
		(SELECT d.delivered_at FROM note_deliveries d WHERE d.note_id = n.id AND d.connection_id = $2)
	FROM target
	CROSS JOIN LATERAL (` + unreadSQL("$2", "target.sender_slug", "CASE WHEN i.session_id = target.id THEN (SELECT coalesce(max(id), 0) FROM shown) ELSE 0 END") + `) u
	LEFT JOIN page n ON true
	ORDER BY n.id DESC`

// ReadAgentMail returns a page of the Team mail the connection may read in a session it is invited
// to (readableBy).
func (s *Store) ReadAgentMail(ctx context.Context, workspaceID, connectionID int64, sessionType, publicID string, beforeID int64, limit int) ([]AgentMailNote, Unread, error) {
	if limit < 1 || limit > MaxMailPage {
		return nil, Unread{}, &FieldError{"limit", fmt.Sprintf("use 1 to %d", MaxMailPage)}
	}
	rows, err := s.pool.Query(ctx, readAgentMailSQL, workspaceID, connectionID, sessionType, publicID, pageBefore(beforeID), limit, ReceiptsChannel)
	if err != nil {
		return nil, Unread{}, fmt.Errorf("store: read mail: %w", err)
	}
	defer rows.Close()
	found := false
	var out []AgentMailNote
	var u unreadTargets
	for rows.Next() {
		found = true
		var role *string
		var notified int64
		var n nullableNote
		var addressed bool
		var delivered *time.Time
		if err := rows.Scan(append(append(append([]any{&role, &notified}, u.targets()...), n.targets()...), &addressed, &delivered)...); err != nil {
			return nil, Unread{}, fmt.Errorf("store: read mail: %w", err)
		}
		if role == nil {
			return nil, Unread{}, fmt.Errorf("store: read mail: %w", ErrForbidden)
		}
		if n.ID != nil {
			out = append(out, AgentMailNote{Note: n.note(), Addressed: addressed, DeliveredAt: delivered})
		}
	}
	if err := rows.Err(); err != nil {
		return nil, Unread{}, fmt.Errorf("store: read mail: %w", err)
	}
	if !found {
		return nil, Unread{}, fmt.Errorf("store: read mail: %w", ErrNotFound)
	}
	return out, u.unread(), nil
}

type nullableNote struct {
	ID, WorkspaceID, SessionID        *int64
	SenderKind                        *SenderKind
	SenderOwnerID, SenderConnectionID *int64
	SenderSlug, SenderName            *string
	RecipientSlug                     *string
	MessageType, Subject, Body        *string
	IdempotencyKey                    *string
	CreatedAt                         *time.Time
	InReplyTo                         *int64
}

func (n *nullableNote) targets() []any {
	return []any{&n.ID, &n.WorkspaceID, &n.SessionID, &n.SenderKind, &n.SenderOwnerID, &n.SenderConnectionID,
		&n.SenderSlug, &n.SenderName, &n.RecipientSlug, &n.MessageType, &n.Subject, &n.Body, &n.IdempotencyKey, &n.CreatedAt,
		&n.InReplyTo}
}

func (n *nullableNote) note() Note {
	return Note{ID: *n.ID, WorkspaceID: *n.WorkspaceID, SessionID: *n.SessionID, SenderKind: *n.SenderKind,
		SenderOwnerID: n.SenderOwnerID, SenderConnectionID: n.SenderConnectionID, SenderSlug: *n.SenderSlug,
		SenderName: *n.SenderName, RecipientSlug: n.RecipientSlug, MessageType: *n.MessageType, Subject: *n.Subject,
		Body: *n.Body, IdempotencyKey: n.IdempotencyKey, CreatedAt: *n.CreatedAt, InReplyTo: n.InReplyTo}
}

package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// Message types of Team mail.
const (
	MessageNote     = "note"
	MessageReply    = "reply"
	MessageAnalysis = "analysis"
)

// Limits of a note, the same for agents and owners.
const (
	MaxSubjectLen = 200
	MaxBodyLen    = 10000
)

// NotesChannel is the PostgreSQL NOTIFY channel announcing new notes; the
// payload is "<session id>:<note id>".
const NotesChannel = "osfoundry_notes"

// Note is one entry of a session's Team mail.
type Note struct {
	ID                 int64
	WorkspaceID        int64
	SessionID          int64
	SenderKind         string // "owner" or "agent"
	SenderOwnerID      *int64
	SenderConnectionID *int64
	SenderSlug         string
	SenderName         string
	// RecipientSlug is nil for a note to the whole session.
	RecipientSlug  *string
	MessageType    string
	Subject        string
	Body           string
	IdempotencyKey *string
	CreatedAt      time.Time
}

const noteColumns = `n.id, n.workspace_id, n.session_id, n.sender_kind, n.sender_owner_id, n.sender_connection_id,
	n.sender_slug, n.sender_name, n.recipient_slug, n.message_type, n.subject, n.body, n.idempotency_key, n.created_at`

func scanNote(row pgx.Row) (*Note, error) {
	n := &Note{}
	err := row.Scan(&n.ID, &n.WorkspaceID, &n.SessionID, &n.SenderKind, &n.SenderOwnerID, &n.SenderConnectionID,
		&n.SenderSlug, &n.SenderName, &n.RecipientSlug, &n.MessageType, &n.Subject, &n.Body, &n.IdempotencyKey, &n.CreatedAt)
	return n, err
}

// insertNote writes a note, its note_posted resource event and the change
// notification inside tx: all three commit together or not at all. For agent
// notes with an idempotency key, a conflicting (connection, key) returns
// (nil, nil) so that the caller can load the first note.
//
// It locks the session row before the note takes its id, so the writers of
// one session take ids in the order they commit: a reader that has seen note
// N never sees a note < N of that session appear later, and "id > last seen"
// is a safe cursor (web polls, agents catching up from the top).
func insertNote(ctx context.Context, tx pgx.Tx, n *Note) (*Note, error) {
	if _, err := tx.Exec(ctx, `SELECT 1 FROM sessions WHERE id = $1 FOR NO KEY UPDATE`, n.SessionID); err != nil {
		return nil, fmt.Errorf("lock session: %w", err)
	}
	q := `INSERT INTO notes AS n (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id,
			sender_slug, sender_name, recipient_slug, message_type, subject, body, idempotency_key)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`
	if n.IdempotencyKey != nil {
		q += ` ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING`
	}
	q += ` RETURNING ` + noteColumns
	out, err := scanNote(tx.QueryRow(ctx, q, n.WorkspaceID, n.SessionID, n.SenderKind, n.SenderOwnerID, n.SenderConnectionID,
		n.SenderSlug, n.SenderName, n.RecipientSlug, n.MessageType, n.Subject, n.Body, n.IdempotencyKey))
	if err == pgx.ErrNoRows && n.IdempotencyKey != nil {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	// Analysis notes are owner-only: agents read events, so they get none.
	if out.MessageType != MessageAnalysis {
		if _, err := appendEvent(ctx, tx, out.SessionID, "note_posted", &out.ID, map[string]any{
			"note_id": out.ID, "sender_slug": out.SenderSlug, "message_type": out.MessageType,
		}); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, NotesChannel,
		strconv.FormatInt(out.SessionID, 10)+":"+strconv.FormatInt(out.ID, 10)); err != nil {
		return nil, fmt.Errorf("notify: %w", err)
	}
	return out, nil
}

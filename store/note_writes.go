package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// insertNote writes a note, its event and its webhook deliveries in one statement (noteWriteSQL),
// so they commit together or not at all; a conflicting (connection, idempotency key) writes nothing
// and gives errDuplicateKey.
func insertNote(ctx context.Context, q queryRower, n *Note) (*Note, []notification, error) {
	sql := insertNoteOnce
	if n.IdempotencyKey != nil {
		sql = insertNoteIdempotent
	}
	out, announced, err := writeNote(ctx, q, sql, n.WorkspaceID, n.SessionID, n.SenderKind, n.SenderOwnerID, n.SenderConnectionID,
		n.SenderSlug, n.SenderName, n.RecipientSlug, n.MessageType, n.Subject, n.Body, n.IdempotencyKey, n.InReplyTo)
	if errors.Is(err, pgx.ErrNoRows) && n.IdempotencyKey != nil {
		return nil, nil, errDuplicateKey
	}
	return out, announced, err
}

func writeNote(ctx context.Context, q queryRower, sql string, args ...any) (*Note, []notification, error) {
	var deliveries int64
	out, err := scanNote(q.QueryRow(ctx, sql, args...), &deliveries)
	if err != nil {
		return nil, nil, fmt.Errorf("write note: %w", err)
	}
	announced := []notification{NoteTopic.notification(NoteNotice{SessionID: out.SessionID, NoteID: out.ID, Sent: time.Now()})}
	if deliveries > 0 {
		announced = append(announced, WebhookTopic.notification(struct{}{}))
	}
	return out, announced, nil
}

type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// noteWriteSQL writes the note its CTE src yields, with its event and webhook deliveries. The
// session row is locked before the note takes its id, so a session's notes become visible in id
// order and "id > last seen" is a safe cursor.
func noteWriteSQL(src, conflict string, extra ...string) string {
	more := ""
	for _, e := range extra {
		more += ", " + e
	}
	return `
	WITH ` + src + `, locked AS (
		SELECT s.id, s.project_id FROM sessions s JOIN src ON s.id = src.session_id FOR NO KEY UPDATE OF s
	), note AS (
		INSERT INTO notes AS n (workspace_id, session_id, sender_kind, sender_owner_id, sender_connection_id,
			sender_slug, sender_name, recipient_slug, message_type, subject, body, idempotency_key, in_reply_to)
		SELECT src.workspace_id, locked.id, src.sender_kind, src.sender_owner_id, src.sender_connection_id,
			src.sender_slug, src.sender_name, src.recipient_slug, src.message_type, src.subject, src.body, src.idempotency_key,
			src.in_reply_to
		FROM src, locked
		` + conflict + `
		RETURNING ` + noteColumns + `
	), seq AS (
		UPDATE sessions s SET last_event_seq = s.last_event_seq + 1, updated_at = now()
		FROM note WHERE s.id = note.session_id AND ` + notePosted("note") + `
		RETURNING s.last_event_seq
	), ev AS (
		INSERT INTO resource_events (session_id, sequence, kind, note_id, payload)
		SELECT note.session_id, seq.last_event_seq, 'note_posted', note.id,
			` + notePostedPayload("note") + `
		FROM note, seq
	), outbox AS (
		INSERT INTO webhook_deliveries (endpoint_id, note_id)
		SELECT e.id, note.id FROM note, locked, webhook_endpoints e
		WHERE e.project_id = locked.project_id AND note.message_type NOT IN ('analysis', 'question')
			AND e.enabled AND (note.sender_kind = 'agent' OR e.fires = 'all')
		RETURNING id
	)` + more + `
	SELECT n.*, (SELECT count(*) FROM outbox) FROM note n`
}

const onKeyConflict = `ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING`

const noteValues = `src AS (
		SELECT $1::bigint AS workspace_id, $2::bigint AS session_id, $3::text AS sender_kind, $4::bigint AS sender_owner_id,
			$5::bigint AS sender_connection_id, $6::text AS sender_slug, $7::text AS sender_name, $8::text AS recipient_slug,
			$9::text AS message_type, $10::text AS subject, $11::text AS body, $12::text AS idempotency_key,
			$13::bigint AS in_reply_to)`

var (
	insertNoteOnce       = noteWriteSQL(noteValues, "")
	insertNoteIdempotent = noteWriteSQL(noteValues, onKeyConflict)
)

var errDuplicateKey = errors.New("idempotency key already used")

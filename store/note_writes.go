package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// insertNote writes a note, its note_posted resource event and its webhook
// deliveries (the outbox) in one statement (noteWriteSQL): all commit
// together or not at all, in a transaction of their own when q is the pool.
// It returns the notifications the note calls for, which the caller sends
// with notifyAfterCommit once the note has committed. For notes with an idempotency
// key, a conflicting (connection, key) writes nothing and returns
// errDuplicateKey, so that the caller can load the first note.
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

// writeNote runs a statement of noteWriteSQL and returns the note it wrote
// and the notifications the note calls for (NoteTopic's, and a wake-up
// for the webhook senders when it made deliveries); pgx.ErrNoRows when it
// wrote none.
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

// queryRower is what writeNote needs of a pool or a transaction.
type queryRower interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// noteWriteSQL is the statement that writes the note its CTE src yields (at
// most one row, with the columns of notes a writer sets: workspace_id,
// session_id, sender_kind, sender_owner_id, sender_connection_id,
// sender_slug, sender_name, recipient_slug, message_type, subject, body,
// idempotency_key, in_reply_to); conflict ends the note's INSERT. The rest:
//
//   - locked: the session row, locked before the note takes its id, so the
//     writers of one session take ids in the order they commit: a reader
//     that has seen note N never sees a note < N of that session appear
//     later, and "id > last seen" is a safe cursor (web polls, agents
//     catching up from the top);
//   - note: the note (with an idempotency key, nothing on a conflict);
//   - seq: the session's next event sequence number, reserved only for a
//     note that was written and gets an event (a duplicate leaves no gap);
//   - ev: the event (analysis notes are owner-only: agents read events, so
//     they get none);
//   - outbox: a delivery per enabled endpoint of the project that the note
//     fires (agents' notes fire every endpoint, owners' notes those set to
//     all notes, analysis notes none, questions none: their timer queues
//     their own event when the owners are to be reached off the page);
//   - extra: more CTEs that write what the note brings with it (a
//     question's row), which may read note and locked.
//
// It answers the note and its count of deliveries; no row means nothing was
// written.
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
		FROM note WHERE s.id = note.session_id AND note.message_type <> 'analysis'
		RETURNING s.last_event_seq
	), ev AS (
		INSERT INTO resource_events (session_id, sequence, kind, note_id, payload)
		SELECT note.session_id, seq.last_event_seq, 'note_posted', note.id,
			jsonb_build_object('note_id', note.id, 'sender_slug', note.sender_slug, 'message_type', note.message_type)
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

// onKeyConflict ends the INSERT of a note with an idempotency key.
const onKeyConflict = `ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING`

// noteValues is the src of insertNote: the note as its thirteen parameters.
const noteValues = `src AS (
		SELECT $1::bigint AS workspace_id, $2::bigint AS session_id, $3::text AS sender_kind, $4::bigint AS sender_owner_id,
			$5::bigint AS sender_connection_id, $6::text AS sender_slug, $7::text AS sender_name, $8::text AS recipient_slug,
			$9::text AS message_type, $10::text AS subject, $11::text AS body, $12::text AS idempotency_key,
			$13::bigint AS in_reply_to)`

var (
	insertNoteOnce       = noteWriteSQL(noteValues, "")
	insertNoteIdempotent = noteWriteSQL(noteValues, onKeyConflict)
)

// errDuplicateKey tells a caller of insertNote that the (connection,
// idempotency key) already has a note; nothing was written.
var errDuplicateKey = errors.New("idempotency key already used")

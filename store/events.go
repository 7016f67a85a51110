package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ResourceEvent is one entry of a session's append-only event sequence.
type ResourceEvent struct {
	Sequence  int64
	Kind      string
	NoteID    *int64
	Payload   json.RawMessage
	CreatedAt time.Time
	// DeliveredAt is when the event's note was delivered into the polling
	// connection's agent's context, nil when it was not.
	DeliveredAt *time.Time
}

// Bumping the session's counter row serialises writers of one session, so sequences are gap-free (a
// rolled-back transaction rolls its number back too).
func appendEvent(ctx context.Context, tx pgx.Tx, sessionID int64, kind string, noteID *int64, payload any) (int64, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return 0, err
	}
	var seq int64
	if err := tx.QueryRow(ctx, `
		WITH bumped AS (
			UPDATE sessions SET last_event_seq = last_event_seq + 1, updated_at = now()
			WHERE id = $1 RETURNING last_event_seq
		)
		INSERT INTO resource_events (session_id, sequence, kind, note_id, payload)
		SELECT $1, last_event_seq, $2, $3, $4 FROM bumped
		RETURNING sequence`, sessionID, kind, noteID, body).Scan(&seq); err != nil {
		return 0, fmt.Errorf("append event: %w", err)
	}
	return seq, nil
}

// MaxEventPage is the largest page poll_resource_events returns.
const MaxEventPage = 100

const pollEventsSQL = `
	SELECT i.role, e.sequence, e.kind, e.note_id, e.payload, e.created_at,
		(SELECT d.delivered_at FROM note_deliveries d WHERE d.note_id = e.note_id AND d.connection_id = $4)
	FROM sessions s
	LEFT JOIN invitations i ON i.session_id = s.id AND i.connection_id = $4
	LEFT JOIN LATERAL (
		SELECT e.sequence, e.kind, e.note_id, e.payload, e.created_at FROM resource_events e
		WHERE i.role IS NOT NULL AND e.session_id = s.id AND e.sequence > $5 ORDER BY e.sequence LIMIT $6
	) e ON true
	WHERE s.workspace_id = $1 AND s.session_type = $2 AND s.public_id = $3
	ORDER BY e.sequence`

// PollEvents returns up to limit events of a session the connection is
// invited to with a sequence greater than afterSeq, ascending, and the
// sequence to pass back next time (the last one returned, or afterSeq when
// there is nothing new), in one statement. ErrNotFound: no such session in
// the workspace; ErrForbidden: not invited.
func (s *Store) PollEvents(ctx context.Context, workspaceID, connectionID int64, sessionType, publicID string, afterSeq int64, limit int) ([]ResourceEvent, int64, error) {
	if limit < 1 || limit > MaxEventPage {
		return nil, 0, &FieldError{"limit", fmt.Sprintf("use 1 to %d", MaxEventPage)}
	}
	if afterSeq < 0 {
		return nil, 0, &FieldError{"after_sequence", "use 0 or more"}
	}
	rows, err := s.pool.Query(ctx, pollEventsSQL, workspaceID, sessionType, publicID, connectionID, afterSeq, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("store: poll events: %w", err)
	}
	defer rows.Close()
	found := false
	var out []ResourceEvent
	for rows.Next() {
		found = true
		var role *string
		var seq *int64
		var e ResourceEvent
		var kind *string
		var at *time.Time
		if err := rows.Scan(&role, &seq, &kind, &e.NoteID, &e.Payload, &at, &e.DeliveredAt); err != nil {
			return nil, 0, fmt.Errorf("store: poll events: %w", err)
		}
		if role == nil {
			return nil, 0, wrap("poll events", ErrForbidden)
		}
		if seq != nil {
			e.Sequence, e.Kind, e.CreatedAt = *seq, *kind, *at
			out = append(out, e)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, 0, fmt.Errorf("store: poll events: %w", err)
	}
	if !found {
		return nil, 0, wrap("poll events", ErrNotFound)
	}
	next := afterSeq
	if len(out) > 0 {
		next = out[len(out)-1].Sequence
	}
	return out, next, nil
}

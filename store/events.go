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
}

// appendEvent adds the next event of a session inside tx. Bumping the
// session's counter row serialises writers of one session, so sequences are
// gap-free (a rolled-back transaction rolls its number back too).
func appendEvent(ctx context.Context, tx pgx.Tx, sessionID int64, kind string, noteID *int64, payload any) (int64, error) {
	body, err := json.Marshal(payload)
	if err != nil {
		return 0, err
	}
	var seq int64
	if err := tx.QueryRow(ctx, `
		UPDATE sessions SET last_event_seq = last_event_seq + 1, updated_at = now()
		WHERE id = $1 RETURNING last_event_seq`, sessionID).Scan(&seq); err != nil {
		return 0, fmt.Errorf("bump event sequence: %w", err)
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO resource_events (session_id, sequence, kind, note_id, payload) VALUES ($1, $2, $3, $4, $5)`,
		sessionID, seq, kind, noteID, body); err != nil {
		return 0, fmt.Errorf("insert event: %w", err)
	}
	return seq, nil
}

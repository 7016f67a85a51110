package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// RelayNote is a note addressed to an agent, with its session's public name.
type RelayNote struct {
	Note
	SessionType     string
	SessionPublicID string
}

// MaxRelayReplay bounds the notes a reconnecting relay stream is sent from
// the database.
const MaxRelayReplay = 100

var relayNoteSQL = `
	SELECT ` + noteColumns + `, s.session_type, s.public_id,
		coalesce((SELECT array_agg(c.id ORDER BY c.id) FROM invitations i JOIN connections c ON c.id = i.connection_id
			WHERE i.session_id = n.session_id AND c.id = ANY($2) AND c.revoked_at IS NULL
				AND ` + addressedTo("c.id", "c.sender_slug") + `), '{}')
	FROM notes n JOIN sessions s ON s.id = n.session_id
	WHERE n.id = $1`

// RelayNoteFor returns a note and which of the given connections it is addressed to (invited to its
// session, not revoked, addressedTo).
func (s *Store) RelayNoteFor(ctx context.Context, noteID int64, connectionIDs []int64) (*RelayNote, []int64, error) {
	rn := &RelayNote{}
	var to []int64
	err := s.pool.QueryRow(ctx, relayNoteSQL, noteID, connectionIDs).
		Scan(append(rn.Note.targets(), &rn.SessionType, &rn.SessionPublicID, &to)...)
	if err != nil {
		return nil, nil, wrap("relay note", err)
	}
	return rn, to, nil
}

var relayMailSQL = `
	SELECT ` + noteColumns + `, s.session_type, s.public_id
	FROM invitations i
	JOIN connections c ON c.id = i.connection_id AND c.revoked_at IS NULL
	JOIN sessions s ON s.id = i.session_id
	LEFT JOIN agent_mail_reads m ON m.session_id = i.session_id AND m.connection_id = i.connection_id
	CROSS JOIN LATERAL (
		SELECT * FROM notes n
		WHERE ` + inSession("i.session_id") + ` AND ` + addressedTo("$1", "c.sender_slug") + `
			AND NOT EXISTS (SELECT 1 FROM note_receipts r WHERE r.note_id = n.id AND r.connection_id = $1)
			AND (($2 > 0 AND n.id > $2) OR ($2 = 0 AND n.id > coalesce(m.read_through, 0)
				AND NOT EXISTS (SELECT 1 FROM note_deliveries d WHERE d.note_id = n.id AND d.connection_id = $1)))
		ORDER BY n.session_id, n.id DESC
		LIMIT $3
	) n
	WHERE i.connection_id = $1
	ORDER BY n.id DESC
	LIMIT $3`

// RelayMail returns what a relay stream of the connection is sent when it connects, oldest first,
// at most MaxRelayReplay.
func (s *Store) RelayMail(ctx context.Context, connectionID, after int64) ([]RelayNote, error) {
	rows, err := s.pool.Query(ctx, relayMailSQL, connectionID, after, MaxRelayReplay)
	if err != nil {
		return nil, fmt.Errorf("store: relay mail: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (RelayNote, error) {
		var rn RelayNote
		err := r.Scan(append(rn.Note.targets(), &rn.SessionType, &rn.SessionPublicID)...)
		return rn, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: relay mail: %w", err)
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// LiveConnections returns which of the given connections are not revoked.
func (s *Store) LiveConnections(ctx context.Context, connectionIDs []int64) ([]int64, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM connections WHERE id = ANY($1) AND revoked_at IS NULL`, connectionIDs)
	if err != nil {
		return nil, fmt.Errorf("store: live connections: %w", err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	if err != nil {
		return nil, fmt.Errorf("store: live connections: %w", err)
	}
	return ids, nil
}

// Their sessions are locked before the deliveries take their ids, as receipts do
// (readAgentMailSQL), so that a session's receipts and deliveries become visible in id order.
var markDeliveredSQL = `
	WITH fresh AS (
		SELECT n.id, n.session_id, n.sender_kind FROM notes n
		JOIN connections c ON c.id = $1
		JOIN invitations i ON i.session_id = n.session_id AND i.connection_id = $1
		WHERE n.id = ANY($2) AND ` + addressedTo("$1", "c.sender_slug") + `
			AND NOT EXISTS (SELECT 1 FROM note_receipts r WHERE r.note_id = n.id AND r.connection_id = $1)
			AND NOT EXISTS (SELECT 1 FROM note_deliveries d WHERE d.note_id = n.id AND d.connection_id = $1)
	), locked AS (
		SELECT s.id FROM sessions s WHERE s.id IN (SELECT f.session_id FROM fresh f) ORDER BY s.id FOR NO KEY UPDATE
	)
	INSERT INTO note_deliveries (note_id, connection_id, session_id, owner_note)
	SELECT f.id, $1, f.session_id, f.sender_kind = 'owner' FROM fresh f
	WHERE f.session_id IN (SELECT l.id FROM locked l)
	ORDER BY f.id
	ON CONFLICT (note_id, connection_id) DO NOTHING
	RETURNING note_id, session_id, owner_note`

// MarkDelivered records that the notes were put into the context of the connection's agent (by a
// hook or a channel), once per (note, connection) on whichever replica first.
func (s *Store) MarkDelivered(ctx context.Context, connectionID int64, noteIDs []int64) ([]int64, error) {
	if len(noteIDs) == 0 {
		return nil, nil
	}
	var marked []int64
	var announced []notification
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, markDeliveredSQL, connectionID, noteIDs)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r NoteRef
			var owner bool
			if err := rows.Scan(&r.NoteID, &r.SessionID, &owner); err != nil {
				return err
			}
			marked = append(marked, r.NoteID)
			if owner {
				announced = append(announced, ReceiptTopic.notification(r))
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("store: mark delivered: %w", err)
	}
	s.notifyAfterCommit(announced...)
	return marked, nil
}

// Deliveries returns when each of the notes was delivered to the
// connection, for those that were.
func (s *Store) Deliveries(ctx context.Context, connectionID int64, noteIDs []int64) (map[int64]time.Time, error) {
	if len(noteIDs) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `SELECT note_id, delivered_at FROM note_deliveries WHERE connection_id = $1 AND note_id = ANY($2)`, connectionID, noteIDs)
	if err != nil {
		return nil, fmt.Errorf("store: deliveries: %w", err)
	}
	defer rows.Close()
	out := map[int64]time.Time{}
	for rows.Next() {
		var id int64
		var at time.Time
		if err := rows.Scan(&id, &at); err != nil {
			return nil, fmt.Errorf("store: deliveries: %w", err)
		}
		out[id] = at
	}
	return out, rows.Err()
}

// FromKind is a note's from_kind as agents read it: "owner", AgentLabel,
// or SystemSlug for osFoundry's own notes.
func (n *Note) FromKind() string {
	switch n.SenderKind {
	case SenderAgent:
		return AgentLabel
	case SenderSystem:
		return SystemSlug
	}
	return string(SenderOwner)
}

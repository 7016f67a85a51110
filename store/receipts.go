package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Receipt records that read_session_mail returned a note to a connection for the first time.
type Receipt struct {
	ID           int64
	NoteID       int64
	ConnectionID int64
	// Reader is the agent's display name, or its client's name when it
	// read before claiming a profile.
	Reader string
	ReadAt time.Time
	// Delivered marks a delivery not yet followed by a read.
	Delivered bool
	Handle    string
}

const receiptColumns = `r.id, r.note_id, r.connection_id, coalesce(p.display_name, c.client_name), r.read_at, r.delivered, coalesce(p.handle, '')`

func receiptRows(notes string) string {
	return `(SELECT x.id, x.note_id, x.connection_id, x.read_at, false AS delivered FROM note_receipts x WHERE ` + notes + `
		UNION ALL
		SELECT x.id, x.note_id, x.connection_id, x.delivered_at, true FROM note_deliveries x WHERE ` + notes + `
			AND NOT EXISTS (SELECT 1 FROM note_receipts y WHERE y.note_id = x.note_id AND y.connection_id = x.connection_id)) r`
}

const receiptJoins = `
	JOIN notes n ON n.id = r.note_id
	JOIN connections c ON c.id = r.connection_id
	LEFT JOIN agent_profiles p ON p.connection_id = r.connection_id`

func ownerNoteReceipts(ws, session string) string {
	return `n.workspace_id = ` + ws + ` AND n.session_id = ` + session + ` AND n.sender_kind = 'owner'`
}

// NoteReceipts returns the receipts of the given notes of a session (the
// owners' notes among them), each note's oldest first.
func (s *Store) NoteReceipts(ctx context.Context, workspaceID, sessionID int64, noteIDs []int64) ([]Receipt, error) {
	if len(noteIDs) == 0 {
		return nil, nil
	}
	rows, err := s.pool.Query(ctx, `
		SELECT `+receiptColumns+` FROM `+receiptRows("x.note_id = ANY($3)")+receiptJoins+`
		WHERE `+ownerNoteReceipts("$1", "$2")+`
		ORDER BY r.note_id, r.id`, workspaceID, sessionID, noteIDs)
	if err != nil {
		return nil, fmt.Errorf("store: note receipts: %w", err)
	}
	return collectReceipts(rows, "note receipts")
}

var receiptsAfterSQL = `
		SELECT ` + receiptColumns + `
		FROM (SELECT r.note_id FROM note_receipts r WHERE r.session_id = $2 AND r.owner_note AND r.id > $3
			UNION SELECT d.note_id FROM note_deliveries d WHERE d.session_id = $2 AND d.owner_note AND d.id > $3) changed
		CROSS JOIN LATERAL (SELECT * FROM ` + receiptRows("x.note_id = changed.note_id") + ` OFFSET 0) r` + receiptJoins + `
		WHERE ` + ownerNoteReceipts("$1", "$2") + `
		ORDER BY r.note_id, r.id`

// ReceiptsAfter returns what changed in a session's read marks since the receipt afterID.
func (s *Store) ReceiptsAfter(ctx context.Context, workspaceID, sessionID, afterID int64) ([]Receipt, error) {
	rows, err := s.pool.Query(ctx, receiptsAfterSQL, workspaceID, sessionID, afterID)
	if err != nil {
		return nil, fmt.Errorf("store: receipts after: %w", err)
	}
	return collectReceipts(rows, "receipts after")
}

func collectReceipts(rows pgx.Rows, op string) ([]Receipt, error) {
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Receipt, error) {
		var rc Receipt
		err := r.Scan(&rc.ID, &rc.NoteID, &rc.ConnectionID, &rc.Reader, &rc.ReadAt, &rc.Delivered, &rc.Handle)
		return rc, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: %s: %w", op, err)
	}
	return out, nil
}

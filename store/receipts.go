package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Receipt records that read_session_mail returned a note to a connection
// for the first time: "read by <Reader> · <ReadAt>"; or, while it has not,
// that the note was delivered into the agent's context (Delivered, at
// ReadAt): "in @<Handle>'s context · <ReadAt>".
type Receipt struct {
	ID           int64
	NoteID       int64
	ConnectionID int64
	// Reader is the agent's display name, or its client's name when it
	// read before claiming a profile.
	Reader string
	ReadAt time.Time
	// Delivered marks a delivery not yet followed by a read; Handle is the
	// agent's handle ("" before it claimed a profile).
	Delivered bool
	Handle    string
}

// Team mail shows receipts on owners' notes only (an agent's note has no
// read marks). receiptColumns are a receipt joined with its note n, its
// connection c and the connection's profile p.
const receiptColumns = `r.id, r.note_id, r.connection_id, coalesce(p.display_name, c.client_name), r.read_at, r.delivered, coalesce(p.handle, '')`

// receiptRows are the receipts and the deliveries not yet followed by a
// receipt, of the notes the condition notes (on the SQL names x.note_id)
// picks, as one relation r of receiptColumns.
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

// ownerNoteReceipts is the condition of the receipts Team mail shows: on an
// owner's note of one session of the workspace. ws and session are the SQL
// parameters holding their ids.
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

// receiptsAfterSQL is ReceiptsAfter's statement, $1 the workspace, $2 the
// session, $3 the receipt after which to look. The receipts after it are a
// range of note_receipts_owner_notes_idx (the receipts on owners' notes by
// session), whatever the session holds; each such note's line is read
// by its note (OFFSET 0 keeps the lookup per note: a join may otherwise
// hash every receipt of the table).
var receiptsAfterSQL = `
		SELECT ` + receiptColumns + `
		FROM (SELECT r.note_id FROM note_receipts r WHERE r.session_id = $2 AND r.owner_note AND r.id > $3
			UNION SELECT d.note_id FROM note_deliveries d WHERE d.session_id = $2 AND d.owner_note AND d.id > $3) changed
		CROSS JOIN LATERAL (SELECT * FROM ` + receiptRows("x.note_id = changed.note_id") + ` OFFSET 0) r` + receiptJoins + `
		WHERE ` + ownerNoteReceipts("$1", "$2") + `
		ORDER BY r.note_id, r.id`

// ReceiptsAfter returns what changed in a session's read marks since the
// receipt afterID: every receipt of each owner's note that got one with a
// larger id (the whole line of that note, to show again), each note's
// oldest first. Within a session receipts become visible in id order
// (ReadAgentMail locks the session first), so "id > afterID" misses none.
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

package store

import (
	"context"
	"fmt"
	"math"
)

// MailPageSize is how many notes the session page shows before "older notes".
const MailPageSize = 50

const maxMailAfter = 200

// inSession is "n.session_id = id" written as a range, so that every plan keeps session_id in the
// order only notes_session_idx gives (docs/performance.md).
func inSession(id string) string {
	return `n.session_id BETWEEN ` + id + ` AND ` + id
}

// pageBefore is a page's exclusive upper bound, the largest id when beforeID is 0: "id < $n" is an
// index bound, "($n = 0 OR id < $n)" is not.
func pageBefore(beforeID int64) int64 {
	if beforeID <= 0 {
		return math.MaxInt64
	}
	return beforeID
}

// ListSessionMail returns a page of a session's Team mail as its owners see it (analysis notes
// included), newest first. It returns at most limit+1 rows so that the caller can tell whether an
// older page exists.
func (s *Store) ListSessionMail(ctx context.Context, workspaceID, sessionID, beforeID int64, limit int) ([]Note, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+listedColumns+` FROM notes n `+listedJoin+`
		WHERE n.workspace_id = $1 AND `+inSession("$2")+` AND n.id < $3
		ORDER BY n.session_id, n.id DESC LIMIT $4`, workspaceID, sessionID, pageBefore(beforeID), limit+1)
	if err != nil {
		return nil, fmt.Errorf("store: list session mail: %w", err)
	}
	return collectListedNotes(rows, "list session mail")
}

// SessionMailAfter returns the notes of a session newer than afterID, newest first (at most 200).
func (s *Store) SessionMailAfter(ctx context.Context, workspaceID, sessionID, afterID int64) ([]Note, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+listedColumns+` FROM notes n `+listedJoin+`
		WHERE n.workspace_id = $1 AND `+inSession("$2")+` AND n.id > $3
		ORDER BY n.session_id, n.id DESC LIMIT $4`, workspaceID, sessionID, afterID, maxMailAfter)
	if err != nil {
		return nil, fmt.Errorf("store: session mail after: %w", err)
	}
	return collectListedNotes(rows, "session mail after")
}

// GetSessionNote returns one note of a session of the workspace.
func (s *Store) GetSessionNote(ctx context.Context, workspaceID, sessionID, noteID int64) (*Note, error) {
	n, err := sessionNote(ctx, s.pool, workspaceID, sessionID, noteID)
	if err != nil {
		return nil, wrap("get note", err)
	}
	return n, nil
}

func sessionNote(ctx context.Context, q queryRower, workspaceID, sessionID, noteID int64) (*Note, error) {
	return scanNote(q.QueryRow(ctx, `
		SELECT `+noteColumns+` FROM notes n WHERE n.workspace_id = $1 AND n.session_id = $2 AND n.id = $3`,
		workspaceID, sessionID, noteID))
}

// MailMarks are the newest note and the newest receipt on an owner's note of a session (0 when
// none).
type MailMarks struct {
	Note    int64
	Receipt int64
}

var sessionMailMarksSQL = `
		SELECT s.workspace_id, coalesce((SELECT max(n.id) FROM notes n WHERE n.session_id = s.id), 0),
			greatest(coalesce((SELECT max(r.id) FROM note_receipts r WHERE r.session_id = s.id AND r.owner_note), 0),
				coalesce((SELECT max(d.id) FROM note_deliveries d WHERE d.session_id = s.id AND d.owner_note), 0))
		FROM sessions s WHERE s.id = $1`

// SessionMailMarks returns the workspace of a session and its MailMarks.
// Unknown sessions give ErrNotFound.
func (s *Store) SessionMailMarks(ctx context.Context, sessionID int64) (workspaceID int64, m MailMarks, err error) {
	err = s.pool.QueryRow(ctx, sessionMailMarksSQL, sessionID).Scan(&workspaceID, &m.Note, &m.Receipt)
	if err != nil {
		return 0, MailMarks{}, wrap("session mail marks", err)
	}
	return workspaceID, m, nil
}

func newestNoteAt(session string) string {
	return `(SELECT n.created_at FROM notes n WHERE ` + inSession(session) + ` ORDER BY n.session_id, n.id DESC LIMIT 1)`
}

// OwnerSees reports whether the owner still belongs to the workspace and, when sessionID is not 0,
// whether that session is one of the workspace's.
func (s *Store) OwnerSees(ctx context.Context, ownerID, workspaceID, sessionID int64) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `
		SELECT EXISTS (SELECT 1 FROM owners o WHERE o.id = $1 AND o.workspace_id = $2)
			AND ($3 = 0 OR EXISTS (SELECT 1 FROM sessions s WHERE s.id = $3 AND s.workspace_id = $2))`,
		ownerID, workspaceID, sessionID).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("store: owner sees: %w", err)
	}
	return ok, nil
}

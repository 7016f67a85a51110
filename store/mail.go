package store

import (
	"context"
	"fmt"
	"math"
)

// MailPageSize is how many notes the session page shows before "older notes".
const MailPageSize = 50

// maxMailAfter bounds the rows one poll returns; a page far behind reloads.
const maxMailAfter = 200

// Queries of one session's notes name the session with inSession and order
// by (session_id, id DESC), the order of notes_session_idx, so that every
// plan, generic ones included, reads that index rather than walking all notes
// by id. A page's upper bound is always "id < $n" (pageBefore), never
// "($n = 0 OR id < $n)", which no plan can use as an index bound.

// inSession is the condition "n.session_id is the session id", written as a
// range: with "=", PostgreSQL takes session_id for a constant, drops it from
// the ORDER BY, and may then walk the primary key backwards through every
// newer note of every other session (it expects a session's notes spread
// evenly over all ids), which for a quiet session among busy ones reads all
// their notes to find ten. The range keeps session_id in the order, which
// only notes_session_idx provides. id is an SQL expression.
func inSession(id string) string {
	return `n.session_id BETWEEN ` + id + ` AND ` + id
}

// pageBefore is the exclusive upper bound of a page of notes: beforeID, or
// no bound (the largest id) when it is 0.
func pageBefore(beforeID int64) int64 {
	if beforeID <= 0 {
		return math.MaxInt64
	}
	return beforeID
}

// ListSessionMail returns a page of a session's Team mail as its owners see
// it (analysis notes included), newest first. With beforeID > 0 only notes
// with a smaller id. It returns at most limit+1 rows so that the caller can
// tell whether an older page exists.
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

// SessionMailAfter returns the notes of a session newer than afterID, newest
// first (at most 200). Within a session, note ids become visible in
// increasing order (insertNote serialises writers), so "id > afterID" never
// skips a note that commits later.
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

// MailMarks are the newest note and the newest receipt on an owner's note of
// a session (0 when none): what its Team mail page polls against.
type MailMarks struct {
	Note    int64
	Receipt int64
}

// sessionMailMarksSQL is SessionMailMarks' statement, $1 the session.
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

// newestNoteAt is the time of the newest note of the session the SQL
// expression session names (NULL when it has none): the note with the
// largest id, one probe of notes_session_idx. (The largest created_at
// would read every note of the session: no index orders them by time.)
func newestNoteAt(session string) string {
	return `(SELECT n.created_at FROM notes n WHERE ` + inSession(session) + ` ORDER BY n.session_id, n.id DESC LIMIT 1)`
}

// OwnerSees reports whether the owner still belongs to the workspace and,
// when sessionID is not 0, whether that session is one of the workspace's:
// what a live stream re-checks while it stays open.
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

package store

import (
	"context"
	"fmt"
)

// MaxThread bounds the notes a thread page shows.
const MaxThread = 500

// ThreadNotes returns a note of a session of the workspace and every note
// down its thread (the replies to it, the replies to those, …), oldest
// first, at most MaxThread. A note that is not the session's gives
// ErrNotFound.
func (s *Store) ThreadNotes(ctx context.Context, workspaceID, sessionID, noteID int64) ([]Note, error) {
	rows, err := s.pool.Query(ctx, `
		WITH RECURSIVE thread AS (
			SELECT n.id FROM notes n WHERE n.workspace_id = $1 AND n.session_id = $2 AND n.id = $3
			UNION ALL
			SELECT r.id FROM notes r JOIN thread t ON r.in_reply_to = t.id
		)
		SELECT `+listedColumns+` FROM notes n `+listedJoin+`
		WHERE n.id IN (SELECT id FROM thread)
		ORDER BY n.id LIMIT $4`, workspaceID, sessionID, noteID, MaxThread)
	if err != nil {
		return nil, fmt.Errorf("store: thread: %w", err)
	}
	notes, err := collectListedNotes(rows, "thread")
	if err == nil && len(notes) == 0 {
		err = fmt.Errorf("store: thread: %w", ErrNotFound)
	}
	return notes, err
}

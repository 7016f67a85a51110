package store

import (
	"context"
	"fmt"
)

// ExportSessionMail calls each with every note of a session of the workspace, oldest first,
// analysis notes included (owners export), reading them as it goes.
func (s *Store) ExportSessionMail(ctx context.Context, workspaceID, sessionID int64, each func(*Note) error) error {
	return s.exportSessionMailIn(ctx, s.pool, workspaceID, sessionID, each)
}

func (s *Store) exportSessionMailIn(ctx context.Context, q querier, workspaceID, sessionID int64, each func(*Note) error) error {
	rows, err := q.Query(ctx, `
		SELECT `+noteColumns+` FROM notes n
		WHERE n.workspace_id = $1 AND `+inSession("$2")+`
		ORDER BY n.session_id, n.id`, workspaceID, sessionID)
	if err != nil {
		return fmt.Errorf("store: export: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		n, err := scanNote(rows)
		if err != nil {
			return fmt.Errorf("store: export: %w", err)
		}
		if err := each(n); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("store: export: %w", err)
	}
	return nil
}

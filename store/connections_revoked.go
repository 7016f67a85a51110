package store

import (
	"context"
	"fmt"
)

const maxRevokedListed = 50

// ListRevokedConnections returns the workspace's revoked connections, the most recently revoked
// first (at most maxRevokedListed).
func (s *Store) ListRevokedConnections(ctx context.Context, workspaceID int64) ([]ConnectionSummary, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, c.workspace_id, c.owner_id, c.client_id, c.client_name, c.scopes, c.sender_slug,
			c.created_at, c.last_seen_at, c.revoked_at, p.handle, p.display_name
		FROM connections c
		LEFT JOIN agent_profiles p ON p.workspace_id = c.workspace_id AND p.connection_id = c.id
		WHERE c.workspace_id = $1 AND c.revoked_at IS NOT NULL
		ORDER BY c.revoked_at DESC, c.id DESC
		LIMIT $2`, workspaceID, maxRevokedListed)
	if err != nil {
		return nil, fmt.Errorf("store: list revoked connections: %w", err)
	}
	defer rows.Close()
	var out []ConnectionSummary
	for rows.Next() {
		var cs ConnectionSummary
		c := &cs.Connection
		if err := rows.Scan(&c.ID, &c.WorkspaceID, &c.OwnerID, &c.ClientID, &c.ClientName, &c.Scopes, &c.SenderSlug,
			&c.CreatedAt, &c.LastSeenAt, &c.RevokedAt, &cs.Handle, &cs.DisplayName); err != nil {
			return nil, fmt.Errorf("store: list revoked connections: %w", err)
		}
		out = append(out, cs)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list revoked connections: %w", err)
	}
	return out, nil
}

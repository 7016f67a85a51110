package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The statements of the hot paths, for tests that explain their plans.
var (
	UseAccessTokenSQL = useAccessTokenSQL
	ReadAgentMailSQL  = readAgentMailSQL
	InboxAllSQL       = inboxAll
	InboxUnreadSQL    = inboxUnread
	UnreadMailSQL     = unreadMailSQL
	SearchWindow      = searchWindow
	SearchWalk        = searchWalk
	SearchWordsSQL    = searchWordsSQL
	ListAgentsSQL     = listAgentsSQL

	ListProjectSummariesSQL = listProjectSummariesSQL
	ListSessionSummariesSQL = listSessionSummariesSQL
	SessionMailMarksSQL     = sessionMailMarksSQL
	ReceiptsAfterSQL        = receiptsAfterSQL
	DuplicateOwnerNoteSQL   = duplicateOwnerNoteSQL
	UnreadMailInSQL         = unreadMailInSQL
	CountUnreadSQL          = countUnreadSQL
	TokenCheckSQL           = tokenCheckCounting
)

// InsertNote runs the note statement alone (insertNote: the session lock,
// the note, its event and outbox), then sends its notifications, for the
// benchmarks of store_test.
func (s *Store) InsertNote(ctx context.Context, n *Note) (*Note, error) {
	out, announced, err := insertNote(ctx, s.pool, n)
	if err == nil {
		s.notifyAfterCommit(announced...)
	}
	return out, err
}

// SetSweepEvery shortens a cache's SweepInterval; call it before the listener runs.
func SetSweepEvery(c *MailCache, d time.Duration) { c.sweepEvery = d }

// SchemaVersion returns the newest applied migration version (0 on an empty database).
func (s *Store) SchemaVersion(ctx context.Context) (int, error) {
	var v int
	err := s.pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&v)
	if err != nil {
		return 0, fmt.Errorf("store: schema version: %w", err)
	}
	return v, nil
}

// GetProfile returns the profile claimed by a connection, or ErrNoProfile.
func (s *Store) GetProfile(ctx context.Context, workspaceID, connectionID int64) (*Profile, error) {
	p := &Profile{}
	err := s.pool.QueryRow(ctx, `
		SELECT p.connection_id, p.workspace_id, p.handle, p.display_name, coalesce(c.sender_slug, ''), p.created_at, p.updated_at
		FROM agent_profiles p JOIN connections c ON c.id = p.connection_id
		WHERE p.workspace_id = $1 AND p.connection_id = $2`, workspaceID, connectionID).
		Scan(&p.ConnectionID, &p.WorkspaceID, &p.Handle, &p.DisplayName, &p.SenderSlug, &p.CreatedAt, &p.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: get profile: %w", ErrNoProfile)
	}
	if err != nil {
		return nil, fmt.Errorf("store: get profile: %w", err)
	}
	return p, nil
}

// SeatConnection seats a connection in a project, both of the workspace.
// Seating twice is harmless.
func (s *Store) SeatConnection(ctx context.Context, workspaceID, projectID, connectionID int64) error {
	if err := seatConnection(ctx, s.pool, workspaceID, connectionID, []int64{projectID}); err != nil {
		return fmt.Errorf("store: seat connection: %w", err)
	}
	return nil
}

// Setting returns a run-time setting of the store's connections.
func (s *Store) Setting(ctx context.Context, name string) (string, error) {
	var v string
	err := s.pool.Pool.QueryRow(ctx, `SELECT current_setting($1)`, name).Scan(&v)
	return v, err
}

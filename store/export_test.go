package store

import (
	"time"

	"context"
)

// The statements of the hot paths, for tests that explain their plans.
var (
	UseAccessTokenSQL = useAccessTokenSQL
	ReadAgentMailSQL  = readAgentMailSQL
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

package store

import (
	"time"

	"context"

	"github.com/jackc/pgx/v5"
)

// The statements of the hot paths, for tests that explain their plans.
var (
	UseAccessTokenSQL = useAccessTokenSQL
	ReadAgentMailSQL  = readAgentMailSQL
)

// InsertNote runs the note transaction alone (insertNote: the session lock
// by the event sequence, the note, its event and outbox), then sends its
// notifications, for the benchmarks of store_test.
func (s *Store) InsertNote(ctx context.Context, n *Note) (*Note, error) {
	var out *Note
	var announced []notice
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, announced, err = insertNote(ctx, tx, n)
		return err
	})
	if err == nil {
		s.announce(ctx, announced)
	}
	return out, err
}

// SetSweepEvery shortens a hub's HubSweepInterval; call it before Run.
func SetSweepEvery(h *NoteHub, d time.Duration) { h.sweepEvery = d }

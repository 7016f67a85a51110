package store

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// The statements of the hot paths, for tests that explain their plans.
var (
	UseAccessTokenSQL = useAccessTokenSQL
	ReadAgentMailSQL  = readAgentMailSQL
)

// InsertNote runs the note transaction alone (insertNote: the session lock
// by the event sequence, the note, its event, outbox and notifications), for
// the benchmarks of store_test.
func (s *Store) InsertNote(ctx context.Context, n *Note) (*Note, error) {
	var out *Note
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = insertNote(ctx, tx, n)
		return err
	})
	return out, err
}

// Package testfactory loads bulk data for benchmarks and tests: what a
// store method makes (owners, sessions, agents, statuses) through the
// store, and what would take hours one call at a time (notes, events, read
// marks, receipts) set-based, with the store's own expressions for slugs,
// events and who may read a note (store/bulk_sql.go).
package testfactory

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// DB is the loader's line to the store's database: a pgxpool.Pool.
type DB interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// Vacuum runs VACUUM (ANALYZE), as autovacuum would after a bulk load.
func Vacuum(ctx context.Context, db DB) error {
	if _, err := db.Exec(ctx, `VACUUM (ANALYZE)`); err != nil {
		return fmt.Errorf("testfactory: vacuum: %w", err)
	}
	return nil
}

// Sizes are the database's, the notes table's and the receipts table's
// sizes (with their indexes and TOAST), and the count of receipts.
type Sizes struct {
	DatabaseBytes, NotesBytes, ReceiptsBytes, Receipts int64
}

// SizesOf reads the Sizes of the database db is on.
func SizesOf(ctx context.Context, db DB) (Sizes, error) {
	var s Sizes
	err := db.QueryRow(ctx, `SELECT pg_database_size(current_database()), pg_total_relation_size('notes'),
		pg_total_relation_size('note_receipts'), (SELECT count(*) FROM note_receipts)`).
		Scan(&s.DatabaseBytes, &s.NotesBytes, &s.ReceiptsBytes, &s.Receipts)
	if err != nil {
		return s, fmt.Errorf("testfactory: sizes: %w", err)
	}
	return s, nil
}

// NewestOwnerReceipt is the id of the newest receipt of an owner's note in
// a session (0 for none): the receipts cursor an owner's poll carries.
func NewestOwnerReceipt(ctx context.Context, db DB, sessionID int64) (int64, error) {
	var id int64
	err := db.QueryRow(ctx, `SELECT coalesce(max(r.id), 0) FROM note_receipts r WHERE r.session_id = $1 AND r.owner_note`, sessionID).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("testfactory: newest receipt: %w", err)
	}
	return id, nil
}

// valOrDefault is val, or def when val is the zero value.
func valOrDefault[T comparable](val, def T) T {
	var zero T
	if val == zero {
		return def
	}
	return val
}

// QuestionByKey is the id of the question the connection asked with the
// idempotency key; pgx.ErrNoRows (wrapped) while there is none.
func QuestionByKey(ctx context.Context, db DB, connectionID int64, key string) (int64, error) {
	var id int64
	err := db.QueryRow(ctx, `SELECT q.note_id FROM questions q JOIN notes n ON n.id = q.note_id
		WHERE n.sender_connection_id = $1 AND n.idempotency_key = $2`, connectionID, key).Scan(&id)
	if err != nil {
		return 0, fmt.Errorf("testfactory: question: %w", err)
	}
	return id, nil
}

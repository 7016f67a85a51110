package store

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// MaxOpenQuestions bounds an agent's open questions (the trigger of
// migrations/060 holds the same number).
const MaxOpenQuestions = 20

// ErrTooManyQuestions refuses a question past MaxOpenQuestions.
var ErrTooManyQuestions = &FieldError{"question", fmt.Sprintf("%d of your questions are open already, the most an agent may have: "+
	"wait for their answers (read_session_mail) or for them to expire before asking more; nothing was asked", MaxOpenQuestions)}

func isTooManyQuestions(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.ConstraintName == "questions_open_per_agent"
}

// WriteLimits are a project's limits on each connection's writes.
type WriteLimits struct {
	PerMinute int
	Burst     int
}

// Bounds of WriteLimits.
const (
	MaxWritesPerMinute = 6000
	MaxWriteBurst      = 1000
)

// DefaultWriteLimits are a new project's.
var DefaultWriteLimits = WriteLimits{PerMinute: 60, Burst: 20}

// Validate checks the bounds; each refusal names its field.
func (l WriteLimits) Validate() error {
	var errs []error
	if l.PerMinute < 1 || l.PerMinute > MaxWritesPerMinute {
		errs = append(errs, &FieldError{"write_per_minute", fmt.Sprintf("use 1 to %d writes a minute", MaxWritesPerMinute)})
	}
	if l.Burst < 1 || l.Burst > MaxWriteBurst {
		errs = append(errs, &FieldError{"write_burst", fmt.Sprintf("use 1 to %d writes", MaxWriteBurst)})
	}
	return errors.Join(errs...)
}

// ProjectWriteLimits returns a project's write limits.
func (s *Store) ProjectWriteLimits(ctx context.Context, workspaceID, projectID int64) (WriteLimits, error) {
	var l WriteLimits
	err := s.pool.QueryRow(ctx, `SELECT write_per_minute, write_burst FROM projects WHERE workspace_id = $1 AND id = $2`,
		workspaceID, projectID).Scan(&l.PerMinute, &l.Burst)
	if err != nil {
		return l, wrap("project write limits", err)
	}
	return l, nil
}

// SetProjectWriteLimits changes a project's write limits, from the next
// write on.
func (s *Store) SetProjectWriteLimits(ctx context.Context, workspaceID, projectID int64, l WriteLimits) error {
	if err := l.Validate(); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, `UPDATE projects SET write_per_minute = $3, write_burst = $4 WHERE workspace_id = $1 AND id = $2`,
		workspaceID, projectID, l.PerMinute, l.Burst)
	if err != nil {
		return fmt.Errorf("store: set project write limits: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: set project write limits: %w", ErrNotFound)
	}
	return nil
}

// WriteLimited refuses a write past its connection's bucket: nothing was
// written, and a write is possible again after RetryAfter.
type WriteLimited struct {
	RetryAfter time.Duration
	Limits     WriteLimits
}

func (e *WriteLimited) Error() string {
	return fmt.Sprintf("Too many writes from this connection: this project allows %d a minute, in bursts of at most %d. "+
		"Nothing was written. Wait %d seconds, then send it again (the same idempotency_key); put what you have to say in fewer, longer notes.",
		e.Limits.PerMinute, e.Limits.Burst, e.RetrySeconds())
}

// RetrySeconds is RetryAfter in whole seconds, at least 1.
func (e *WriteLimited) RetrySeconds() int { return max(int(math.Ceil(e.RetryAfter.Seconds())), 1) }

// writeBucket takes a token from connection $2's bucket for a write with
// idempotency key key; a retry of a key already written takes none. The
// row's lock orders the writes of one connection sent at once, on any replica.
func writeBucket(key, minute string) string {
	return `bucket AS (
		INSERT INTO write_buckets AS b (connection_id, tokens, refilled_at, per_minute, burst, granted)
		SELECT $2, p.write_burst - 1, now(), p.write_per_minute, p.write_burst, true
		FROM target t JOIN sessions bs ON bs.id = t.id JOIN projects p ON p.id = bs.project_id
		WHERE NOT EXISTS (SELECT 1 FROM notes k WHERE k.sender_connection_id = $2 AND k.idempotency_key = ` + key + `::text)
		ON CONFLICT (connection_id) DO UPDATE SET (tokens, refilled_at, per_minute, burst, granted) = (
			SELECT CASE WHEN f.tokens >= 1 THEN f.tokens - 1 ELSE f.tokens END, now(), EXCLUDED.per_minute, EXCLUDED.burst, f.tokens >= 1
			FROM (SELECT least(EXCLUDED.burst::float8,
				b.tokens + extract(epoch FROM now() - b.refilled_at) * EXCLUDED.per_minute / ` + minute + `::float8) AS tokens) f)
		RETURNING granted)`
}

const granted = `(SELECT bucket.granted FROM bucket)`

func (s *Store) writeMinuteSeconds() float64 {
	if s.writeMinute > 0 {
		return s.writeMinute.Seconds()
	}
	return 60
}

func (s *Store) writeRefused(ctx context.Context, connectionID int64) error {
	var ok bool
	var tokens float64
	var l WriteLimits
	err := s.pool.QueryRow(ctx, `SELECT granted, tokens, per_minute, burst FROM write_buckets WHERE connection_id = $1`, connectionID).
		Scan(&ok, &tokens, &l.PerMinute, &l.Burst)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil
	case err != nil:
		return err
	case ok:
		return nil
	}
	minute := time.Duration(s.writeMinuteSeconds() * float64(time.Second))
	return &WriteLimited{RetryAfter: time.Duration((1 - tokens) / float64(l.PerMinute) * float64(minute)), Limits: l}
}

// SetWriteMinute makes a minute of the write limits last d.
func (s *Store) SetWriteMinute(d time.Duration) { s.writeMinute = d }

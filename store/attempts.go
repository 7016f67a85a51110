package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// The actions whose password checks are throttled (ReserveAttempt).
const (
	ActionSignIn   = "sign-in"
	ActionSetup    = "setup"
	ActionPassword = "password"
)

// How tries slow down: past a key's free tries, each try must wait AttemptDelay after the one
// before, doubling with every try, at most AttemptMaxDelay.
const (
	AttemptDelay    = 30 * time.Second
	AttemptMaxDelay = 15 * time.Minute
	AttemptQuiet    = time.Hour
)

// AttemptKey is one counter a try is reserved on.
type AttemptKey struct {
	Email string
	// FreeTries is how many tries go one after the other before they slow down.
	FreeTries int
}

// Attempt is the outcome of reserving a try.
type Attempt struct {
	// Allowed says the try may go ahead: its password may be checked.
	Allowed bool
	// Left is how many more tries go at once after this one (the fewest of the keys).
	Left int
	// Wait is how long until the next try is allowed.
	Wait time.Duration
}

// ReserveAttempt counts a try of action from addr on every key, before its password is checked, in
// one statement, so that concurrent tries cannot go ahead together past what the keys allow.
func (s *Store) ReserveAttempt(ctx context.Context, action, addr string, keys ...AttemptKey) (Attempt, error) {
	emails := make([]string, len(keys))
	free := make([]int32, len(keys))
	for i, k := range keys {
		emails[i], free[i] = NormalizeEmail(k.Email), int32(max(k.FreeTries, 1))
	}
	// tries is the count after this try: it starts over after a quiet spell.
	const tries = `CASE WHEN a.last_at < clock_timestamp() - make_interval(secs => $7) THEN 1 ELSE a.tries + 1 END`
	// nextAt is when the try after one numbered t may go.
	nextAt := func(t, free string) string {
		return fmt.Sprintf(`clock_timestamp() + CASE WHEN %[1]s < %[2]s THEN interval '0' ELSE make_interval(secs => least($5 * power(2, least(%[1]s - %[2]s, 30)), $6)) END`, t, free)
	}
	rows, err := s.pool.Query(ctx, `
		WITH k AS (SELECT * FROM unnest($2::text[], $4::int[]) AS k(email, free_tries)),
		r AS (
			INSERT INTO attempts AS a (action, email, remote_addr, tries, free_tries, next_at, last_at)
			SELECT $1, k.email, $3, 1, k.free_tries, `+nextAt("1", "k.free_tries")+`, clock_timestamp() FROM k
			ON CONFLICT (action, email, remote_addr) DO UPDATE SET
				tries = `+tries+`,
				free_tries = EXCLUDED.free_tries,
				next_at = `+nextAt(tries, "EXCLUDED.free_tries")+`,
				last_at = clock_timestamp()
			WHERE a.next_at <= clock_timestamp()
			RETURNING a.email, a.tries, a.next_at
		)
		SELECT r.tries IS NOT NULL, coalesce(k.free_tries - r.tries, 0),
			greatest(extract(epoch FROM coalesce(r.next_at, a.next_at, clock_timestamp() + make_interval(secs => $5)) - clock_timestamp()), 0)
		FROM k LEFT JOIN r ON r.email = k.email
			LEFT JOIN attempts a ON a.action = $1 AND a.email = k.email AND a.remote_addr = $3`,
		action, emails, addr, free, AttemptDelay.Seconds(), AttemptMaxDelay.Seconds(), AttemptQuiet.Seconds())
	if err != nil {
		return Attempt{}, fmt.Errorf("store: reserve attempt: %w", err)
	}
	defer rows.Close()
	out := Attempt{Allowed: true, Left: -1}
	var refusedWait time.Duration
	for rows.Next() {
		var allowed bool
		var left int
		var wait float64
		if err := rows.Scan(&allowed, &left, &wait); err != nil {
			return Attempt{}, fmt.Errorf("store: reserve attempt: %w", err)
		}
		d := time.Duration(wait * float64(time.Second)).Round(time.Second)
		if !allowed {
			out.Allowed = false
			refusedWait = max(refusedWait, d)
			continue
		}
		if out.Left < 0 || left < out.Left {
			out.Left = max(left, 0)
		}
		out.Wait = max(out.Wait, d)
	}
	if err := rows.Err(); err != nil {
		return Attempt{}, fmt.Errorf("store: reserve attempt: %w", err)
	}
	if !out.Allowed {
		return Attempt{Wait: max(refusedWait, time.Second)}, nil
	}
	if out.Wait > 0 {
		out.Left = 0
	}
	out.Left = max(out.Left, 0)
	return out, nil
}

// AttemptSucceeded forgets the tries of action for the email from addr and gives the address's
// count its try back. It takes the email's row before the address's, as ReserveAttempt does, so
// that the two never deadlock.
func (s *Store) AttemptSucceeded(ctx context.Context, action, addr, email string) error {
	email = NormalizeEmail(email)
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			DELETE FROM attempts
			WHERE (action = $1 AND email = $2 AND remote_addr = $3)
				OR (last_at < now() - interval '1 day' AND NOT (action = $1 AND email = '' AND remote_addr = $3))`,
			action, email, addr); err != nil {
			return err
		}
		if email == "" {
			return nil
		}
		_, err := tx.Exec(ctx, `
			UPDATE attempts SET tries = greatest(tries - 1, 0)
			WHERE action = $1 AND email = '' AND remote_addr = $2`, action, addr)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: attempt succeeded: %w", err)
	}
	return nil
}

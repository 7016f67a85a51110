// Package store is the only code that talks to PostgreSQL. One *Store wraps a pgxpool.Pool, one file
// per aggregate; every query that reads workspace data is scoped by workspace id.
package store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Sentinel errors returned (wrapped) by store methods.
var (
	// ErrNotFound means the row does not exist or is not visible to the caller's workspace.
	ErrNotFound = errors.New("not found")
	// ErrConflict means a uniqueness rule refused the write (a taken handle or email).
	ErrConflict = errors.New("conflict")
	// ErrInvalidCredentials means an email/password pair did not match an owner.
	ErrInvalidCredentials = errors.New("invalid email or password")
	// ErrForbidden means the caller is known but not allowed (not invited, missing scope).
	ErrForbidden = errors.New("forbidden")
	// ErrInvalid means the input broke a rule of the data model; the wrapped text names the field.
	ErrInvalid = errors.New("invalid")
	// ErrBusy means the bound of password hashes running at once was reached (HashGate).
	ErrBusy = errors.New("busy checking other passwords")
)

// DefaultMaxConns is the pool size unless the database URL sets pool_max_conns.
const DefaultMaxConns = 24

// Store is the application's data access layer over one PostgreSQL pool.
type Store struct {
	pool db
	*shared
}

type shared struct {
	statements     *statementCounter
	tokens         tokenCache
	notifications  notifyQueue
	hashes         *HashGate
	links          linkKey
	inviteKey      linkKey
	questionMinute time.Duration
	writeMinute    time.Duration
}

// SetQuestionMinute makes the minutes of the question delays (and the hours of their expiry, 60
// each) last d instead, for the questions asked from then on.
func (s *Store) SetQuestionMinute(d time.Duration) { s.questionMinute = d }

// Open connects to the database at dsn.
func Open(ctx context.Context, dsn string, tune ...func(*pgxpool.Config)) (*Store, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("store: parse database url: %w", err)
	}
	// pgx defaults to max(4, CPUs) connections, which makes writers queue behind each other's
	// commits.
	if !strings.Contains(dsn, "pool_max_conns") {
		cfg.MaxConns = DefaultMaxConns
	}
	if cfg.ConnConfig.ConnectTimeout == 0 {
		cfg.ConnConfig.ConnectTimeout = 5 * time.Second
	}
	// Every statement here is short: compiling one to machine code (JIT, on by default above a plan
	// cost) can take longer than running it, as a search over a million notes showed (0.7 s of
	// compiling for 50 ms of work).
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set {
		cfg.ConnConfig.RuntimeParams["jit"] = "off"
	}
	// Every statement is prepared once per connection (pgx's statement cache) and written to read
	// its indexes in a generic plan (inSession, the row-comparison bounds; the plan tests explain
	// them so).
	if _, set := cfg.ConnConfig.RuntimeParams["plan_cache_mode"]; !set {
		cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	}
	counter := &statementCounter{}
	cfg.ConnConfig.Tracer = counter
	for _, f := range tune {
		f(cfg)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("store: open pool: %w", err)
	}
	return &Store{pool: db{Pool: pool}, shared: &shared{statements: counter, hashes: newHashGate(), questionMinute: time.Minute}}, nil
}

// Close sends the notifications still queued (see notifyAfterCommit), then releases
// every connection.
func (s *Store) Close() {
	s.FlushNotifications()
	s.pool.Close()
}

// FlushNotifications returns once the notifications of the writes that
// returned before it was called have been sent (or failed to be).
func (s *Store) FlushNotifications() { s.notifications.senders.Wait() }

// Ping reports whether the database answers; it backs /readyz.
func (s *Store) Ping(ctx context.Context) error {
	if err := s.pool.Ping(ctx); err != nil {
		return fmt.Errorf("store: ping: %w", err)
	}
	return nil
}

func (s *Store) inTx(ctx context.Context, fn func(pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.pool, fn)
}

func isUniqueViolation(err error, constraint string) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return constraint == "" || pgErr.ConstraintName == constraint
	}
	return false
}

func wrap(op string, err error) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store: %s: %w", op, ErrNotFound)
	}
	return fmt.Errorf("store: %s: %w", op, err)
}

// IsUnavailable reports errors that mean the database cannot be reached right now (connection
// refused or lost, shutting down).
func IsUnavailable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) || pgconn.SafeToRetry(err) || pgconn.Timeout(err) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 57: operator intervention (admin_shutdown, cannot_connect_now, …); 08: connection exceptions.
		return strings.HasPrefix(pgErr.Code, "57") || strings.HasPrefix(pgErr.Code, "08")
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)
}

// CleanText reports whether s can be stored as text: valid UTF-8 without NUL
// (PostgreSQL refuses both). Handlers check outside input with it so that the
// refusal can name the field.
func CleanText(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

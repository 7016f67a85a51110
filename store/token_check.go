package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// ErrTokenRefused means the token presented no longer stands: unknown,
// expired, revoked or for another resource.
var ErrTokenRefused = errors.New("access token refused")

// ErrScopeRefused means the token stands but lacks the scope the call needs.
var ErrScopeRefused = errors.New("access token lacks the call's scope")

// The SQLSTATEs osfoundry_refuse_call raises.
const (
	refusedToken = "OF401"
	refusedScope = "OF403"
)

// tokenRowsSQL are the CTEs of a token check: t, the token's row with its
// connection's ($1 the token's hash, $2 the resource), and seen, which marks
// the connection seen for presence at most once per $3 seconds.
const tokenRowsSQL = `
	WITH t AS (
		SELECT c.id, c.workspace_id, c.owner_id, t.scopes, t.expires_at, t.resource, c.last_seen_at, c.sender_slug
		FROM access_tokens t JOIN connections c ON c.id = t.connection_id
		WHERE t.token_hash = $1 AND t.expires_at > now() AND c.revoked_at IS NULL AND t.resource = $2
	), seen AS (
		UPDATE connections c SET last_seen_at = now()
		FROM t WHERE c.id = t.id AND (t.last_seen_at IS NULL OR t.last_seen_at < now() - make_interval(secs => $3))
	)`

const noUnreadSQL = `SELECT 0, 0, '{}'::text[], '{}'::text[], '{}'::int[], 0`

func tokenCheckSQL(unread bool) string {
	count := noUnreadSQL
	if unread {
		count = unreadSQL("t.id", "t.sender_slug", "0")
	}
	return tokenRowsSQL + `
	SELECT CASE WHEN t.id IS NULL THEN osfoundry_refuse_call('` + refusedToken + `')
		WHEN NOT $4::text = ANY (t.scopes) THEN osfoundry_refuse_call('` + refusedScope + `') END, u.*
	FROM (SELECT) one LEFT JOIN t ON true LEFT JOIN LATERAL (` + count + `) u ON true`
}

var (
	tokenCheckCounting = tokenCheckSQL(true)
	tokenCheckAlone    = tokenCheckSQL(false)
)

// tokenCache is what this replica found of the tokens it checked (UseAccessToken), by hash.
type tokenCache struct {
	mu sync.Mutex
	m  map[[sha256.Size]byte]TokenInfo
}

// maxCachedTokens bounds the tokens a replica remembers; past it, one is
// forgotten for each new one.
const maxCachedTokens = 10_000

func (c *tokenCache) put(key [sha256.Size]byte, ti TokenInfo) {
	ti.Unread = Unread{}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[[sha256.Size]byte]TokenInfo{}
	}
	if _, ok := c.m[key]; !ok && len(c.m) >= maxCachedTokens {
		for k := range c.m {
			delete(c.m, k)
			break
		}
	}
	c.m[key] = ti
}

func (c *tokenCache) forget(key [sha256.Size]byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, key)
}

// CachedToken returns what this replica last found of token for resource (UseAccessToken), while it
// has not expired by this replica's clock, and true.
func (s *Store) CachedToken(token, resource string) (*TokenInfo, bool) {
	key := sha256.Sum256([]byte(token))
	s.tokens.mu.Lock()
	ti, ok := s.tokens.m[key]
	s.tokens.mu.Unlock()
	if !ok || ti.Resource != resource || !time.Now().Before(ti.ExpiresAt) {
		return nil, false
	}
	return &ti, true
}

// TokenCheck is one call's check of its token, sent in one pipeline ahead of the call's first
// statement (AsCaller). When it refuses, PostgreSQL skips the rest, so a revoked, expired or
// narrowed token is refused on its next call on every replica.
type TokenCheck struct {
	store    *Store
	key      [sha256.Size]byte
	resource string
	scope    string
	unread   bool

	mu     sync.Mutex
	ran    bool
	err    error
	counts Unread
}

// NewTokenCheck returns a check of token for resource and scope, not sent yet.
func (s *Store) NewTokenCheck(token, resource, scope string, unread bool) *TokenCheck {
	return &TokenCheck{store: s, key: sha256.Sum256([]byte(token)), resource: resource, scope: scope, unread: unread}
}

// AsCaller returns the store as the caller c checks.
func (s *Store) AsCaller(c *TokenCheck) *Store {
	if c == nil {
		return s
	}
	return &Store{pool: db{Pool: s.pool.Pool, check: c}, shared: s.shared}
}

// Result returns what the check found, running it alone first when no statement took it.
func (c *TokenCheck) Result(ctx context.Context) (Unread, error) {
	c.mu.Lock()
	ran := c.ran
	c.ran = true
	c.mu.Unlock()
	if !ran {
		sql, args := c.statement()
		_ = c.finish(c.store.pool.Pool.QueryRow(ctx, sql, args...))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.counts, c.err
}

// pending returns the check the next statement must carry, and marks it sent; nil when there is
// none (or it was sent).
func (d db) pending() (c *TokenCheck, refused error) {
	if d.check == nil {
		return nil, nil
	}
	c = d.check
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ran {
		return nil, c.err
	}
	c.ran = true
	return c, nil
}

func (c *TokenCheck) statement() (string, []any) {
	sql := tokenCheckAlone
	if c.unread {
		sql = tokenCheckCounting
	}
	return sql, []any{c.key[:], c.resource, PresenceWriteInterval.Seconds(), c.scope}
}

// A refused token is forgotten.
func (c *TokenCheck) finish(row pgx.Row) error {
	var u unreadTargets
	var refused *int
	err := row.Scan(append([]any{&refused}, u.targets()...)...)
	var pgErr *pgconn.PgError
	switch {
	case err == nil:
	case errors.As(err, &pgErr) && pgErr.Code == refusedToken:
		err = fmt.Errorf("store: check token: %w", ErrTokenRefused)
	case errors.As(err, &pgErr) && pgErr.Code == refusedScope:
		err = fmt.Errorf("store: check token: %w", ErrScopeRefused)
	default:
		err = fmt.Errorf("store: check token: %w", err)
	}
	if errors.Is(err, ErrTokenRefused) || errors.Is(err, ErrScopeRefused) {
		c.store.tokens.forget(c.key)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	if err == nil {
		c.counts = u.unread()
	}
	return err
}

func (d db) checkedBatch(ctx context.Context, c *TokenCheck, sql string, args []any) (pgx.BatchResults, error) {
	b := &pgx.Batch{}
	check, checkArgs := c.statement()
	b.Queue(check, checkArgs...)
	b.Queue(sql, args...)
	br := d.Pool.SendBatch(ctx, b)
	if err := c.finish(br.QueryRow()); err != nil {
		br.Close()
		return nil, err
	}
	return br, nil
}

type batchRow struct {
	row pgx.Row
	br  pgx.BatchResults
}

func (r batchRow) Scan(dest ...any) error {
	err := r.row.Scan(dest...)
	if cerr := r.br.Close(); err == nil {
		err = cerr
	}
	return err
}

type batchRows struct {
	pgx.Rows
	br  pgx.BatchResults
	err error
}

func (r *batchRows) Close() {
	r.Rows.Close()
	if r.br != nil {
		if err := r.br.Close(); err != nil && r.err == nil {
			r.err = err
		}
		r.br = nil
	}
}

func (r *batchRows) Err() error {
	if err := r.Rows.Err(); err != nil {
		return err
	}
	return r.err
}

type errRow struct{ err error }

func (r errRow) Scan(...any) error { return r.err }

type db struct {
	*pgxpool.Pool
	check *TokenCheck
}

func (d db) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	c, refused := d.pending()
	switch {
	case refused != nil:
		return errRow{refused}
	case c == nil:
		return d.Pool.QueryRow(ctx, sql, args...)
	}
	br, err := d.checkedBatch(ctx, c, sql, args)
	if err != nil {
		return errRow{err}
	}
	return batchRow{row: br.QueryRow(), br: br}
}

func (d db) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	c, refused := d.pending()
	switch {
	case refused != nil:
		return nil, refused
	case c == nil:
		return d.Pool.Query(ctx, sql, args...)
	}
	br, err := d.checkedBatch(ctx, c, sql, args)
	if err != nil {
		return nil, err
	}
	rows, err := br.Query()
	if err != nil {
		br.Close()
		return nil, err
	}
	return &batchRows{Rows: rows, br: br}, nil
}

func (d db) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	c, refused := d.pending()
	switch {
	case refused != nil:
		return pgconn.CommandTag{}, refused
	case c == nil:
		return d.Pool.Exec(ctx, sql, args...)
	}
	br, err := d.checkedBatch(ctx, c, sql, args)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	tag, err := br.Exec()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return tag, err
}

func (d db) Begin(ctx context.Context) (pgx.Tx, error) {
	c, refused := d.pending()
	if refused != nil {
		return nil, refused
	}
	tx, err := d.Pool.Begin(ctx)
	if err != nil || c == nil {
		return tx, err
	}
	check, args := c.statement()
	if err := c.finish(tx.QueryRow(ctx, check, args...)); err != nil {
		_ = tx.Rollback(ctx)
		return nil, err
	}
	return tx, nil
}

package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
)

// Fixtures is a test's direct line to its database, for what no store method does.
type Fixtures struct {
	t    testing.TB
	pool *pgxpool.Pool
}

var fixturePools sync.Map

// SQL returns the fixtures of the database that st, made by New, works on.
func SQL(t testing.TB, st *store.Store) *Fixtures {
	t.Helper()
	pool, ok := fixturePools.Load(st)
	if !ok {
		t.Fatal("storetest: SQL needs a Store made by storetest.New (use SQLAt with its DSN otherwise)")
	}
	return &Fixtures{t: t, pool: pool.(*pgxpool.Pool)}
}

// SQLAt returns fixtures on the database at dsn, for a test that opens its own
// Store; the pool is closed at cleanup.
func SQLAt(t testing.TB, dsn string) *Fixtures {
	t.Helper()
	pool := newFixturePool(t, dsn)
	t.Cleanup(pool.Close)
	return &Fixtures{t: t, pool: pool}
}

func newFixturePool(t testing.TB, dsn string) *pgxpool.Pool {
	t.Helper()
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		t.Fatalf("storetest: fixtures: %v", err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "osfoundry-test-fixtures"
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatalf("storetest: fixtures: %v", err)
	}
	return pool
}

// DSN is the connection string of the test's database, for a second Store
// on it (another replica) or a connection of its own (LISTEN).
func (f *Fixtures) DSN() string { return f.pool.Config().ConnString() }

// Exec runs sql.
func (f *Fixtures) Exec(sql string, args ...any) {
	f.t.Helper()
	if _, err := f.pool.Exec(context.Background(), sql, args...); err != nil {
		f.t.Fatalf("storetest: %s: %v", sql, err)
	}
}

// QueryRow runs sql for one row; its Scan reports the error.
func (f *Fixtures) QueryRow(sql string, args ...any) pgx.Row {
	return f.pool.QueryRow(context.Background(), sql, args...)
}

// Query runs sql for rows; the caller closes them and checks rows.Err.
func (f *Fixtures) Query(sql string, args ...any) pgx.Rows {
	f.t.Helper()
	rows, err := f.pool.Query(context.Background(), sql, args...)
	if err != nil {
		f.t.Fatalf("storetest: %s: %v", sql, err)
	}
	return rows
}

// Begin opens a transaction; the caller commits or rolls it back.
func (f *Fixtures) Begin() pgx.Tx {
	f.t.Helper()
	tx, err := f.pool.Begin(context.Background())
	if err != nil {
		f.t.Fatalf("storetest: begin: %v", err)
	}
	return tx
}

// execOne runs sql, which must change exactly one row.
func (f *Fixtures) execOne(sql string, args ...any) {
	f.t.Helper()
	tag, err := f.pool.Exec(context.Background(), sql, args...)
	if err != nil {
		f.t.Fatalf("storetest: %s: %v", sql, err)
	}
	if tag.RowsAffected() != 1 {
		f.t.Fatalf("storetest: %s: %d rows, want 1", sql, tag.RowsAffected())
	}
}

// InsertWorkspace writes a workspace with one owner directly, without the
// cost of hashing a password: the owner cannot sign in.
func (f *Fixtures) InsertWorkspace(name string) (workspaceID, ownerID int64) {
	f.t.Helper()
	err := f.QueryRow(`
		WITH w AS (INSERT INTO workspaces (name) VALUES ($1) RETURNING id)
		INSERT INTO owners (workspace_id, email, display_name, password_hash)
		SELECT w.id, 'owner' || w.id || '@example.com', 'Owner', '$argon2id$fixture' FROM w
		RETURNING workspace_id, id`, name).Scan(&workspaceID, &ownerID)
	if err != nil {
		f.t.Fatalf("storetest: insert workspace: %v", err)
	}
	return workspaceID, ownerID
}

// InsertOwner writes another owner of a workspace directly (who cannot
// sign in) and returns their id.
func (f *Fixtures) InsertOwner(workspaceID int64, displayName string) int64 {
	f.t.Helper()
	var id int64
	err := f.QueryRow(`
		INSERT INTO owners (workspace_id, email, display_name, password_hash)
		VALUES ($1, 'owner-' || gen_random_uuid() || '@example.com', $2, '$argon2id$fixture')
		RETURNING id`, workspaceID, displayName).Scan(&id)
	if err != nil {
		f.t.Fatalf("storetest: insert owner: %v", err)
	}
	return id
}

// SetLastSeen makes a connection's last authenticated call ago before now,
// as presence reads it.
func (f *Fixtures) SetLastSeen(connectionID int64, ago time.Duration) {
	f.t.Helper()
	f.execOne(`UPDATE connections SET last_seen_at = now() - make_interval(secs => $2) WHERE id = $1`, connectionID, ago.Seconds())
}

// ExpireTokens makes every access token of a connection expired.
func (f *Fixtures) ExpireTokens(connectionID int64) {
	f.t.Helper()
	f.Exec(`UPDATE access_tokens SET expires_at = now() - interval '1 second' WHERE connection_id = $1`, connectionID)
}

// AgeStatuses makes every agent's status ago old.
func (f *Fixtures) AgeStatuses(ago time.Duration) {
	f.t.Helper()
	f.Exec(`UPDATE statuses SET updated_at = now() - make_interval(secs => $1)`, ago.Seconds())
}

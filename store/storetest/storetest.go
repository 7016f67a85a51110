// Package storetest gives each test its own PostgreSQL database, cloned from a migrated template, on
// one private cluster per test binary (or DATABASE_URL). Call storetest.Main from TestMain:
//
//	func TestMain(m *testing.M) { storetest.Main(m) }
package storetest

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/pgserver"
)

var (
	once     sync.Once
	setupErr error
	baseDSN  string // server DSN without dbname
	template string
	server   *pgserver.Server
	tmpDir   string
	counter  atomic.Int64
)

// Main runs the tests of a package and stops the private cluster afterwards.
func Main(m *testing.M) {
	code := m.Run()
	Shutdown()
	os.Exit(code)
}

// Shutdown stops the private cluster, if this process started one.
func Shutdown() {
	if server != nil {
		server.Stop()
		server = nil
	}
	if tmpDir != "" {
		os.RemoveAll(tmpDir)
	}
}

// clusterEnv hands this process's cluster (its DSN without a database) to
// child processes of the test binary, such as fuzz workers, which then use it
// instead of each starting a cluster of their own that they might not get to
// stop and remove.
const clusterEnv = "OSFOUNDRY_TEST_CLUSTER"

func setup() {
	ctx := context.Background()
	template = fmt.Sprintf("osf_template_%d", os.Getpid())
	if url := os.Getenv("DATABASE_URL"); url != "" {
		cfg, err := pgx.ParseConfig(url)
		if err != nil {
			setupErr = fmt.Errorf("DATABASE_URL: %w", err)
			return
		}
		// A keyword DSN without the database, so that " dbname=x" can be appended.
		baseDSN = fmt.Sprintf("host=%s port=%d user=%s password=%s sslmode=prefer", quote(cfg.Host), cfg.Port, quote(cfg.User), quote(cfg.Password))
	} else if dsn := os.Getenv(clusterEnv); dsn != "" {
		baseDSN = dsn
	} else {
		dir, err := os.MkdirTemp("", "osft")
		if err != nil {
			setupErr = err
			return
		}
		tmpDir = dir
		if err := os.Chmod(dir, 0o711); err != nil {
			setupErr = err
			return
		}
		quiet := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
		srv, err := pgserver.Start(ctx, pgserver.Options{DataDir: filepath.Join(dir, "pg"), Database: "postgres", Test: pgserver.TestOptions{Ephemeral: true}, Logger: quiet})
		if err != nil {
			setupErr = err
			return
		}
		server = srv
		baseDSN = srv.BaseDSN
		os.Setenv(clusterEnv, baseDSN)
	}
	if err := exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{template}.Sanitize()); err != nil {
		setupErr = err
		return
	}
	if err := exec(ctx, "CREATE DATABASE "+pgx.Identifier{template}.Sanitize()); err != nil {
		setupErr = err
		return
	}
	st, err := store.Open(ctx, baseDSN+" dbname="+template)
	if err != nil {
		setupErr = err
		return
	}
	defer st.Close()
	if _, err := st.Migrate(ctx); err != nil {
		setupErr = err
	}
}

func exec(ctx context.Context, sql string) error {
	c, err := pgx.Connect(ctx, baseDSN+" dbname=postgres")
	if err != nil {
		return fmt.Errorf("storetest: connect: %w", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		return fmt.Errorf("storetest: %s: %w", sql, err)
	}
	return nil
}

// NewDatabase creates a fresh migrated database for t, dropped at cleanup, and
// returns its DSN.
func NewDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "osf_t", true)
}

// NewEmptyDatabase creates an unmigrated database, dropped at cleanup.
func NewEmptyDatabase(t testing.TB) string {
	t.Helper()
	return newDatabase(t, "osf_e", false)
}

func newDatabase(t testing.TB, prefix string, migrated bool) string {
	t.Helper()
	once.Do(setup)
	if setupErr != nil {
		t.Fatalf("storetest: %v", setupErr)
	}
	name := fmt.Sprintf("%s_%d_%d", prefix, os.Getpid(), counter.Add(1))
	create := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if migrated {
		create += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if err := exec(context.Background(), create); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := exec(context.Background(), "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			t.Logf("storetest: drop %s: %v", name, err)
		}
	})
	return baseDSN + " dbname=" + name
}

// New returns a Store on a fresh migrated database, closed at cleanup.
func New(t testing.TB, tune ...func(*pgxpool.Config)) *store.Store {
	t.Helper()
	dsn := NewDatabase(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := store.Open(ctx, dsn, tune...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	pool := newFixturePool(t, dsn)
	fixturePools.Store(st, pool)
	t.Cleanup(func() {
		fixturePools.Delete(st)
		pool.Close()
	})
	return st
}

func quote(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

package pgserver

import (
	"context"
	"io"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestMissingBinariesErrorIsActionable(t *testing.T) {
	old := searchGlob
	searchGlob = filepath.Join(t.TempDir(), "*", "bin")
	defer func() { searchGlob = old }()
	t.Setenv("OSFOUNDRY_PG_BIN", "/nonexistent")
	t.Setenv("PATH", t.TempDir())
	_, err := FindBinDir()
	if err == nil {
		t.Fatal("found binaries in empty folders")
	}
	for _, want := range []string{"/nonexistent", searchGlob, "apt-get install postgresql", "DATABASE_URL"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestStartStopRestartAndAttach(t *testing.T) {
	if _, err := FindBinDir(); err != nil {
		t.Fatalf("needs the PostgreSQL server binaries (make test installs them): %v", err)
	}
	ctx := context.Background()
	root, err := os.MkdirTemp("", "osfpg")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	os.Chmod(root, 0o711)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	dir := filepath.Join(root, "pg")

	first, err := Start(ctx, Options{DataDir: dir, Database: "app", Test: TestOptions{Ephemeral: true}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	execSQL(t, first.DSN, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)`)

	// A second process on the same folder attaches to the running cluster.
	second, err := Start(ctx, Options{DataDir: dir, Database: "app", Test: TestOptions{Ephemeral: true}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	if second.cmd != nil {
		t.Fatal("second start launched another postgres instead of attaching")
	}
	second.Stop() // does not stop the first one's server
	execSQL(t, first.DSN, `SELECT 1`)

	first.Stop()
	if _, err := os.Stat(filepath.Join(first.DataDir, "postmaster.pid")); !os.IsNotExist(err) {
		t.Fatalf("postmaster.pid still there after Stop: %v", err)
	}
	// Restart reuses the cluster: the data is still there.
	third, err := Start(ctx, Options{DataDir: dir, Database: "app", Test: TestOptions{Ephemeral: true}, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	defer third.Stop()
	c, err := pgx.Connect(ctx, third.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var v int
	if err := c.QueryRow(ctx, `SELECT v FROM kept`).Scan(&v); err != nil || v != 42 {
		t.Fatalf("after restart: %d %v", v, err)
	}
}

func TestUntraversableParentFallsBack(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root starts PostgreSQL as another user")
	}
	root, err := os.MkdirTemp("", "osfpriv")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(root)
	os.Chmod(root, 0o700)
	want := filepath.Join(root, "pg")
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root needs the postgres user (the postgresql package creates it): %v", err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	if got := firstUntraversable(want, uid, gid); got != root {
		t.Fatalf("firstUntraversable = %q, want %q", got, root)
	}
	fb := fallbackDir(want)
	if fb == fallbackDir(want+"x") || !strings.HasPrefix(fb, "/var/tmp/osfoundry-") || fb != fallbackDir(want) {
		t.Fatalf("fallback %q must be stable per requested folder", fb)
	}
}

func execSQL(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatal(err)
	}
}

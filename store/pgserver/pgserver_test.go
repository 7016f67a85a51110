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
	"syscall"
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

// rootFallback is a requested data folder the postgres user cannot reach
// (its parent is root's, 0700), for the tests of the fallback, which only
// root runs (it starts PostgreSQL as the postgres user). Cleanup stops what
// started and removes the fallback folders it made.
func rootFallback(t *testing.T) (requested string, uid, gid int) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("only root starts PostgreSQL as another user")
	}
	if _, err := FindBinDir(); err != nil {
		t.Fatalf("needs the PostgreSQL server binaries (make test installs them): %v", err)
	}
	root, err := os.MkdirTemp("", "osfpriv")
	if err != nil {
		t.Fatal(err)
	}
	os.Chmod(root, 0o700)
	u, err := user.Lookup("postgres")
	if err != nil {
		t.Fatalf("running as root needs the postgres user (the postgresql package creates it): %v", err)
	}
	uid, _ = strconv.Atoi(u.Uid)
	gid, _ = strconv.Atoi(u.Gid)
	requested = filepath.Join(root, "pg")
	t.Cleanup(func() {
		if b, err := os.ReadFile(requested + fallbackSuffix); err == nil {
			os.RemoveAll(filepath.Dir(strings.TrimSpace(string(b))))
		}
		os.RemoveAll(filepath.Dir(legacyFallbackDir(requested)))
		os.RemoveAll(root)
	})
	return requested, uid, gid
}

func quietLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func start(t *testing.T, dir string) (*Server, error) {
	t.Helper()
	s, err := Start(context.Background(), Options{DataDir: dir, Database: "app", Test: TestOptions{Ephemeral: true}, Logger: quietLog()})
	if err == nil {
		t.Cleanup(s.Stop)
	}
	return s, err
}

// TestUntraversableParentFallsBack: a data folder the postgres user cannot
// reach is replaced by a fresh, private one under /var/tmp with a name no
// one can predict, owned by the postgres user; its place is recorded, so a
// restart finds the same cluster.
func TestUntraversableParentFallsBack(t *testing.T) {
	requested, uid, _ := rootFallback(t)
	if got := firstUntraversable(requested, uid, -1); got != filepath.Dir(requested) {
		t.Fatalf("firstUntraversable = %q, want %q", got, filepath.Dir(requested))
	}
	first, err := start(t, requested)
	if err != nil {
		t.Fatal(err)
	}
	dir := first.DataDir
	parent := filepath.Dir(dir)
	if filepath.Dir(parent) != "/var/tmp" || !strings.HasPrefix(filepath.Base(parent), "osfoundry-") || dir == legacyFallbackDir(requested) {
		t.Fatalf("fallback %q, want a fresh /var/tmp/osfoundry-… (not %q)", dir, legacyFallbackDir(requested))
	}
	for _, d := range []string{parent, dir} {
		fi, err := os.Lstat(d)
		if err != nil {
			t.Fatal(err)
		}
		if st := fi.Sys().(*syscall.Stat_t); int(st.Uid) != uid || fi.Mode().Perm() != 0o700 {
			t.Errorf("%s: uid %d mode %v, want the postgres user's, 0700", d, st.Uid, fi.Mode().Perm())
		}
	}
	if fi, err := os.Lstat(requested + fallbackSuffix); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the record of the fallback: %v %v", fi, err)
	}
	execSQL(t, first.DSN, `CREATE TABLE kept (v int); INSERT INTO kept VALUES (42)`)
	first.Stop()

	second, err := start(t, requested)
	if err != nil {
		t.Fatal(err)
	}
	if second.DataDir != dir {
		t.Fatalf("restart used %q, want %q", second.DataDir, dir)
	}
	execSQL(t, second.DSN, `SELECT v FROM kept`)
}

// TestPlantedFallbackIsNotUsed: a folder someone else created where an
// earlier version put the fallback (a symlink to their own folder, or their
// own folder) is not used, nor written to: a fresh one is.
func TestPlantedFallbackIsNotUsed(t *testing.T) {
	requested, _, _ := rootFallback(t)
	legacy := legacyFallbackDir(requested)
	theirs := t.TempDir()
	os.Chown(theirs, 65534, 65534)
	if err := os.MkdirAll(filepath.Dir(legacy), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(theirs, legacy); err != nil {
		t.Fatal(err)
	}
	s, err := start(t, requested)
	if err != nil {
		t.Fatal(err)
	}
	if s.DataDir == legacy || strings.HasPrefix(s.DataDir, filepath.Dir(legacy)) {
		t.Fatalf("used the planted folder: %s", s.DataDir)
	}
	if entries, _ := os.ReadDir(theirs); len(entries) != 0 {
		t.Fatalf("wrote %d files into the planted folder", len(entries))
	}

	// Their own folder (not a symlink) at the predictable place: not used either.
	requested2 := requested + "2"
	legacy2 := legacyFallbackDir(requested2)
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(legacy2)) })
	if err := os.MkdirAll(legacy2, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chown(filepath.Dir(legacy2), 65534, 65534)
	os.Chown(legacy2, 65534, 65534)
	err = checkFallback(legacy2, filepath.Base(requested2), 0)
	if err == nil || !strings.Contains(err.Error(), "must be") {
		t.Fatalf("a folder of another user passed the checks: %v", err)
	}
}

// TestTamperedFallbackIsRefused: once recorded, a fallback whose folder was
// given to another user, opened up, or swapped for a symlink stops the start
// with the component named.
func TestTamperedFallbackIsRefused(t *testing.T) {
	requested, uid, gid := rootFallback(t)
	dir, err := fallbackDir(requested, uid, gid, quietLog())
	if err != nil {
		t.Fatal(err)
	}
	parent := filepath.Dir(dir)
	for _, c := range []struct {
		name   string
		tamper func() error
		undo   func() error
		want   string
	}{
		{"given to another user", func() error { return os.Lchown(parent, 65534, 65534) }, func() error { return os.Lchown(parent, uid, gid) }, parent + " must be"},
		{"opened up", func() error { return os.Chmod(dir, 0o777) }, func() error { return os.Chmod(dir, 0o700) }, dir + " must be"},
		{"swapped for a symlink", func() error {
			if err := os.Rename(parent, parent+".moved"); err != nil {
				return err
			}
			return os.Symlink(parent+".moved", parent)
		}, func() error {
			os.Remove(parent)
			return os.Rename(parent+".moved", parent)
		}, parent + " is a symlink"},
	} {
		if err := c.tamper(); err != nil {
			t.Fatal(err)
		}
		_, err := start(t, requested)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "refusing") {
			t.Errorf("%s: %v, want a refusal naming %q", c.name, err, c.want)
		}
		if err := c.undo(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := start(t, requested); err != nil {
		t.Fatalf("the untampered fallback: %v", err)
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

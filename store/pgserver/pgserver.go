// Package pgserver runs a private PostgreSQL cluster from the system's
// PostgreSQL binaries: initdb once into a data folder, then postgres listening
// only on a unix socket inside that folder. When the process runs as root, both
// run as the "postgres" user, which is given the folder. The server (make run)
// and the test helper use the same code.
package pgserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Options configures a private cluster.
type Options struct {
	// DataDir is the cluster's folder (created when missing).
	DataDir string
	// Database is created when missing; defaults to "osfoundry".
	Database string
	// Logger receives progress lines; defaults to slog.Default().
	Logger *slog.Logger

	// Test holds settings for tests only.
	Test TestOptions
}

// TestOptions are a cluster's settings for tests only.
type TestOptions struct {
	// Ephemeral trades durability for speed (fsync off). For tests only.
	Ephemeral bool
}

// Server is a running private cluster.
type Server struct {
	// DataDir is the folder actually used (it may differ from the requested
	// one when that is not reachable by the postgres user).
	DataDir string
	// DSN connects to Database over the unix socket.
	DSN string
	// BaseDSN connects over the unix socket without naming a database.
	BaseDSN string

	cmd    *exec.Cmd
	exited chan struct{}
	log    *slog.Logger
}

// searchGlob is where Debian's postgresql packages put their binaries.
var searchGlob = "/usr/lib/postgresql/*/bin"

// superuser is the role initdb creates; connections over the private socket trust it.
const superuser = "osfoundry"

// FindBinDir returns the folder holding initdb and postgres: $OSFOUNDRY_PG_BIN,
// the newest /usr/lib/postgresql/*/bin, or the folder of initdb on PATH.
func FindBinDir() (string, error) {
	var looked []string
	if d := os.Getenv("OSFOUNDRY_PG_BIN"); d != "" {
		if hasBinaries(d) {
			return d, nil
		}
		looked = append(looked, d+" (OSFOUNDRY_PG_BIN)")
	}
	matches, _ := filepath.Glob(searchGlob)
	sort.Slice(matches, func(i, j int) bool { return versionOf(matches[i]) > versionOf(matches[j]) })
	for _, d := range matches {
		if hasBinaries(d) {
			return d, nil
		}
	}
	looked = append(looked, searchGlob)
	if p, err := exec.LookPath("initdb"); err == nil {
		d := filepath.Dir(p)
		if hasBinaries(d) {
			return d, nil
		}
	}
	looked = append(looked, "initdb on $PATH")
	return "", fmt.Errorf("no PostgreSQL server binaries (initdb, postgres) found; looked in %s. "+
		"Install them with `apt-get install postgresql`, point OSFOUNDRY_PG_BIN at their folder, "+
		"or set DATABASE_URL to use an existing PostgreSQL server", strings.Join(looked, ", "))
}

func versionOf(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func hasBinaries(dir string) bool {
	for _, b := range []string{"initdb", "postgres"} {
		if fi, err := os.Stat(filepath.Join(dir, b)); err != nil || fi.IsDir() {
			return false
		}
	}
	return true
}

// Start initialises the cluster if needed, starts postgres and waits until the
// database answers. Stop must be called to shut it down.
func Start(ctx context.Context, opt Options) (*Server, error) {
	if opt.Database == "" {
		opt.Database = "osfoundry"
	}
	log := opt.Logger
	if log == nil {
		log = slog.Default()
	}
	bin, err := FindBinDir()
	if err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(opt.DataDir)
	if err != nil {
		return nil, fmt.Errorf("pgserver: data folder: %w", err)
	}

	var cred *syscall.Credential
	var uid, gid int = -1, -1
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, fmt.Errorf("pgserver: running as root, PostgreSQL must run as the 'postgres' user, which does not exist: %w (install the postgresql package, or run as another user, or set DATABASE_URL)", err)
		}
		uid, _ = strconv.Atoi(u.Uid)
		gid, _ = strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if blocked := firstUntraversable(filepath.Dir(dir), uid, gid); blocked != "" {
			fallback, err := fallbackDir(dir, uid, gid, log)
			if err != nil {
				return nil, err
			}
			log.Warn("the postgres user cannot reach the data folder, using another one",
				"requested", dir, "blocked_at", blocked, "using", fallback, "recorded_in", dir+fallbackSuffix)
			dir = fallback
		}
	}
	// A unix socket path is limited to 107 bytes.
	if len(dir)+len("/.s.PGSQL.5432") > 100 {
		return nil, fmt.Errorf("pgserver: data folder path %q is too long for a unix socket (max ~85 characters); choose a shorter --data-dir", dir)
	}
	// Parents we create must be enterable by the postgres user; the cluster folder itself is private.
	if err := os.MkdirAll(filepath.Dir(dir), 0o711); err != nil {
		return nil, fmt.Errorf("pgserver: create data folder: %w", err)
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("pgserver: create data folder: %w", err)
	}
	if uid >= 0 {
		if err := chownTree(dir, uid, gid); err != nil {
			return nil, fmt.Errorf("pgserver: give the data folder to postgres: %w", err)
		}
	}
	if err := os.Chmod(dir, 0o700); err != nil {
		return nil, fmt.Errorf("pgserver: chmod data folder: %w", err)
	}

	if _, err := os.Stat(filepath.Join(dir, "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		start := time.Now()
		cmd := exec.CommandContext(ctx, filepath.Join(bin, "initdb"),
			"-D", dir, "-U", superuser, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8", "--no-instructions")
		if opt.Test.Ephemeral {
			cmd.Args = append(cmd.Args, "--no-sync")
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = "/"
		out, err := cmd.CombinedOutput()
		if err != nil {
			return nil, fmt.Errorf("pgserver: initdb %s: %w\n%s", dir, err, out)
		}
		log.Info("initialised private PostgreSQL cluster", "dir", dir, "took", time.Since(start).Round(time.Millisecond))
	}

	// A cluster already running on this folder (another osfoundry process, such
	// as `osfoundry token create` beside `make run`) is used, not restarted.
	if running := attach(ctx, dir, opt.Database, log); running != nil {
		return running, nil
	}

	args := []string{"-D", dir, "-k", dir, "-c", "listen_addresses=", "-c", "unix_socket_permissions=0700",
		"-c", "max_connections=200", "-c", "shared_buffers=128MB"}
	if opt.Test.Ephemeral {
		args = append(args, "-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")
	}
	logPath := dir + ".log"
	// Never through a symlink: the folder holding the log may be the postgres user's.
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		return nil, fmt.Errorf("pgserver: open log: %w", err)
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Setpgid: true, Pdeathsig: syscall.SIGQUIT}
	cmd.Dir = "/"
	cmd.Stdout = logFile
	cmd.Stderr = logFile
	if err := cmd.Start(); err != nil {
		logFile.Close()
		return nil, fmt.Errorf("pgserver: start postgres: %w", err)
	}
	s := &Server{
		DataDir: dir,
		BaseDSN: fmt.Sprintf("host=%s port=5432 user=%s sslmode=disable", dir, superuser),
		cmd:     cmd,
		exited:  make(chan struct{}),
		log:     log,
	}
	s.DSN = s.BaseDSN + " dbname=" + opt.Database
	go func() {
		cmd.Wait() //nolint:errcheck
		logFile.Close()
		close(s.exited)
	}()

	if err := s.waitReady(ctx, logPath); err != nil {
		s.Stop()
		return nil, err
	}
	if err := s.CreateDatabase(ctx, opt.Database, ""); err != nil {
		s.Stop()
		return nil, err
	}
	log.Info("private PostgreSQL ready", "socket_dir", dir, "database", opt.Database, "log", logPath)
	return s, nil
}

// attach returns a Server for a cluster that already answers on dir's socket.
func attach(ctx context.Context, dir, database string, log *slog.Logger) *Server {
	if _, err := os.Stat(filepath.Join(dir, "postmaster.pid")); err != nil {
		return nil
	}
	base := fmt.Sprintf("host=%s port=5432 user=%s sslmode=disable", dir, superuser)
	cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	c, err := pgx.Connect(cctx, base+" dbname=postgres")
	if err != nil {
		return nil
	}
	c.Close(ctx)
	s := &Server{DataDir: dir, BaseDSN: base, DSN: base + " dbname=" + database, log: log}
	if err := s.CreateDatabase(ctx, database, ""); err != nil {
		return nil
	}
	log.Info("using the private PostgreSQL already running in the data folder", "dir", dir)
	return s
}

func (s *Server) waitReady(ctx context.Context, logPath string) error {
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-s.exited:
			return fmt.Errorf("pgserver: postgres exited during start-up; its log (%s) ends with:\n%s", logPath, tail(logPath, 20))
		default:
		}
		c, err := pgx.Connect(ctx, s.BaseDSN+" dbname=postgres connect_timeout=2")
		if err == nil {
			c.Close(ctx)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("pgserver: postgres did not accept connections within 60s: %w; log %s", err, logPath)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// CreateDatabase creates name (from template, when given) unless it exists.
func (s *Server) CreateDatabase(ctx context.Context, name, template string) error {
	c, err := pgx.Connect(ctx, s.BaseDSN+" dbname=postgres")
	if err != nil {
		return fmt.Errorf("pgserver: connect: %w", err)
	}
	defer c.Close(ctx)
	var exists bool
	if err := c.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return fmt.Errorf("pgserver: look up database: %w", err)
	}
	if exists {
		return nil
	}
	q := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		q += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	if _, err := c.Exec(ctx, q); err != nil {
		return fmt.Errorf("pgserver: create database %s: %w", name, err)
	}
	return nil
}

// Stop shuts postgres down with a fast shutdown and waits up to 30 s for it.
func (s *Server) Stop() {
	if s == nil || s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(syscall.SIGINT)
	select {
	case <-s.exited:
		s.log.Info("private PostgreSQL stopped", "dir", s.DataDir)
	case <-time.After(30 * time.Second):
		_ = s.cmd.Process.Signal(syscall.SIGQUIT)
		<-s.exited
		s.log.Warn("private PostgreSQL did not stop in 30s and was killed", "dir", s.DataDir)
	}
}

// firstUntraversable returns the first folder from / down to dir (which may not
// exist yet) that the given user cannot enter, or "" when all can be entered.
func firstUntraversable(dir string, uid, gid int) string {
	parts := strings.Split(strings.Trim(dir, "/"), "/")
	cur := "/"
	for _, p := range append([]string{""}, parts...) {
		cur = filepath.Join(cur, p)
		fi, err := os.Stat(cur)
		if err != nil {
			return "" // missing folders will be created by us, 0700 and chowned below
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return ""
		}
		mode := fi.Mode().Perm()
		switch {
		case int(st.Uid) == uid:
			if mode&0o100 == 0 {
				return cur
			}
		case int(st.Gid) == gid:
			if mode&0o010 == 0 {
				return cur
			}
		default:
			if mode&0o001 == 0 {
				return cur
			}
		}
	}
	return ""
}

// The fallback of a data folder the postgres user cannot reach: a folder
// under fallbackRoot with an unpredictable name, created fresh, 0700 and
// owned by the postgres user, its path recorded beside the requested folder
// (<requested>.fallback, root's, 0600) so that the next start finds the same
// cluster. Nothing a local user could have created there beforehand is used:
// every component of a recorded path is checked on every start (no
// symlinks; root's, or the postgres user's where it is ours; writable by no
// one else, save a sticky folder such as /var/tmp itself), and a start is
// refused when one fails.
var fallbackRoot = "/var/tmp"

const fallbackSuffix = ".fallback"

// fallbackDir returns the fallback cluster folder of requested: the recorded
// one, checked; an earlier version's predictable one (legacyFallbackDir)
// when it passes the same checks, recorded from now on; else a fresh one.
func fallbackDir(requested string, uid, gid int, log *slog.Logger) (string, error) {
	record := requested + fallbackSuffix
	if err := os.MkdirAll(filepath.Dir(record), 0o700); err != nil {
		return "", fmt.Errorf("pgserver: create data folder: %w", err)
	}
	switch b, err := readRecord(record); {
	case err == nil:
		dir := strings.TrimSpace(string(b))
		if err := checkFallback(dir, filepath.Base(requested), uid); err != nil {
			return "", fmt.Errorf("pgserver: refusing the data folder recorded in %s: %w; if you trust it, fix its owner and mode, else remove %s to start a new, empty cluster", record, err, record)
		}
		return dir, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("pgserver: %w", err)
	}
	if legacy := legacyFallbackDir(requested); exists(legacy) {
		err := checkFallback(legacy, filepath.Base(requested), uid)
		if err == nil {
			log.Info("using the data folder an earlier version chose", "dir", legacy)
			return legacy, writeRecord(record, legacy)
		}
		log.Warn("not using a data folder at the place an earlier version chose: it is not safe; creating a new one", "dir", legacy, "err", err)
	}
	parent, err := os.MkdirTemp(fallbackRoot, "osfoundry-")
	if err != nil {
		return "", fmt.Errorf("pgserver: create a data folder in %s: %w", fallbackRoot, err)
	}
	dir := filepath.Join(parent, filepath.Base(requested))
	if err := os.Mkdir(dir, 0o700); err != nil {
		return "", fmt.Errorf("pgserver: create data folder: %w", err)
	}
	for _, d := range []string{dir, parent} {
		if err := os.Lchown(d, uid, gid); err != nil {
			return "", fmt.Errorf("pgserver: give the data folder to postgres: %w", err)
		}
	}
	return dir, writeRecord(record, dir)
}

// checkFallback checks every component of dir, a fallback cluster folder
// named base: the folders down to fallbackRoot are root's and writable by no
// one else (unless sticky); the one holding the cluster is root's or the
// postgres user's and writable by no one else; the cluster folder is the
// postgres user's and private. None is a symlink.
func checkFallback(dir, base string, uid int) error {
	if !filepath.IsAbs(dir) || filepath.Clean(dir) != dir || filepath.Base(dir) != base ||
		filepath.Dir(filepath.Dir(dir)) != filepath.Clean(fallbackRoot) || !strings.HasPrefix(filepath.Base(filepath.Dir(dir)), "osfoundry-") {
		return fmt.Errorf("%q is not a folder osfoundry creates (%s/osfoundry-…/%s)", dir, fallbackRoot, base)
	}
	parent := filepath.Dir(dir)
	cur := "/"
	for _, p := range append([]string{""}, strings.Split(strings.Trim(dir, "/"), "/")...) {
		cur = filepath.Join(cur, p)
		fi, err := os.Lstat(cur)
		if err != nil {
			return err
		}
		st, ok := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode()
		switch {
		case !ok:
			return fmt.Errorf("%s: cannot read its owner", cur)
		case mode&os.ModeSymlink != 0:
			return fmt.Errorf("%s is a symlink", cur)
		case !mode.IsDir():
			return fmt.Errorf("%s is not a folder", cur)
		case cur == dir:
			if int(st.Uid) != uid || mode.Perm()&0o077 != 0 {
				return fmt.Errorf("%s must be the postgres user's and private (0700), is uid %d mode %v", cur, st.Uid, mode.Perm())
			}
		case cur == parent:
			if (st.Uid != 0 && int(st.Uid) != uid) || mode.Perm()&0o022 != 0 {
				return fmt.Errorf("%s must be root's or the postgres user's and writable by no one else, is uid %d mode %v", cur, st.Uid, mode.Perm())
			}
		default:
			if st.Uid != 0 || (mode.Perm()&0o022 != 0 && mode&os.ModeSticky == 0) {
				return fmt.Errorf("%s must be root's and writable by no one else (or sticky), is uid %d mode %v", cur, st.Uid, mode)
			}
		}
	}
	return nil
}

// readRecord reads the record of a fallback folder, a regular file of
// root's that no one else may write.
func readRecord(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink", path)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || !fi.Mode().IsRegular() || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o022 != 0 {
		return nil, fmt.Errorf("%s must be a file of the user osfoundry runs as, writable by no one else", path)
	}
	b := make([]byte, 4096)
	n, err := f.Read(b)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	return b[:n], nil
}

// writeRecord records dir as the fallback folder, atomically.
func writeRecord(path, dir string) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("pgserver: record the data folder: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.WriteString(dir + "\n"); err != nil {
		tmp.Close()
		return fmt.Errorf("pgserver: record the data folder: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("pgserver: record the data folder: %w", err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("pgserver: record the data folder: %w", err)
	}
	return nil
}

func exists(path string) bool {
	_, err := os.Lstat(path)
	return err == nil
}

// legacyFallbackDir is where earlier versions put the fallback: a name
// derived from the requested folder, which anyone could predict.
func legacyFallbackDir(requested string) string {
	h := uint32(2166136261)
	for i := 0; i < len(requested); i++ {
		h = (h ^ uint32(requested[i])) * 16777619
	}
	return filepath.Join(fallbackRoot, fmt.Sprintf("osfoundry-%08x", h), filepath.Base(requested))
}

func chownTree(dir string, uid, gid int) error {
	return filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok && int(st.Uid) == uid {
			return nil
		}
		return os.Lchown(path, uid, gid)
	})
}

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := bytes.Split(bytes.TrimRight(b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

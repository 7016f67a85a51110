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
	"path/filepath"
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

// superuser is the role initdb creates; connections over the private socket trust it.
const superuser = "osfoundry"

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

	cred, uid, gid, dir, err := runAs(dir, log)
	if err != nil {
		return nil, err
	}
	if err := prepareDataDir(dir, uid, gid); err != nil {
		return nil, err
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

package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/osfoundry/osfoundry/store/pgserver"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// These tests run the real osfoundry binary as separate processes.

var (
	binOnce sync.Once
	binDir  string // removed by TestMain when the tests end
	binPath string
	binErr  error
)

// binary builds osfoundry once per test run, without the race detector: the
// agent tests start it dozens of times, and a race-enabled binary takes a
// second to start.
func binary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "osfbin")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "osfoundry")
		out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// replica is one running server process.
type replica struct {
	t   *testing.T
	cmd *exec.Cmd
	URL string
	// dataDir is the replica's --data-dir.
	dataDir string
	logs    *syncBuffer
	// done is closed when the process has exited; err is its exit error.
	done chan struct{}
	err  error
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

const testSessionKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff"

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startReplica starts the osfoundry binary against dsn on a free loopback
// port (or the one given as "--addr", ADDR in extra). baseURL may be empty
// (then it is the replica's own address).
func startReplica(t *testing.T, dsn, baseURL string, extra ...string) *replica {
	t.Helper()
	return startServer(t, binary(t), nil, dsn, baseURL, extra)
}

// startTestReplica is startReplica with this test binary as the server (see
// TestMain): `osfoundry serve` with the configuration for tests only. The
// test binary is built with the race detector and starts slower than the
// osfoundry binary, so only the tests that need that configuration use it.
func startTestReplica(t *testing.T, dsn, baseURL string, extra ...string) *replica {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return startServer(t, self, []string{testServerArg}, dsn, baseURL, extra)
}

// startServer runs program with its first arguments, then serve and the flags.
func startServer(t *testing.T, program string, first []string, dsn, baseURL string, extra []string) *replica {
	t.Helper()
	addr := ""
	for i := 0; i+1 < len(extra); i++ {
		if extra[i] == "--addr" {
			addr = extra[i+1]
			extra = append(extra[:i:i], extra[i+2:]...)
			break
		}
	}
	if addr == "" {
		addr = freePort(t)
	}
	if baseURL == "" {
		baseURL = "http://" + addr
	}
	dataDir := t.TempDir()
	args := append(first, "serve", "--addr", addr, "--base-url", baseURL, "--data-dir", dataDir, "--log-level", "info")
	cmd := exec.Command(program, append(args, extra...)...)
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dsn, "OSFOUNDRY_SESSION_KEY="+testSessionKey)
	r := &replica{t: t, cmd: cmd, URL: "http://" + addr, dataDir: dataDir, logs: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stdout = r.logs
	cmd.Stderr = r.logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { r.err = cmd.Wait(); close(r.done) }()
	t.Cleanup(func() {
		select {
		case <-r.done:
		default:
			_ = cmd.Process.Kill()
			<-r.done
		}
		if t.Failed() {
			t.Logf("replica %s log:\n%s", r.URL, r.logs.String())
		}
	})
	return r
}

// waitReady polls /readyz (at most 1,500 times, 20 ms apart).
func (r *replica) waitReady() {
	r.t.Helper()
	probe := &http.Client{Timeout: 2 * time.Second}
	for range 1500 {
		select {
		case <-r.done:
			r.t.Fatalf("replica exited during start: %v\n%s", r.err, r.logs.String())
		default:
		}
		res, err := probe.Get(r.URL + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	r.t.Fatalf("replica %s not ready\n%s", r.URL, r.logs.String())
}

// waitLog waits until the replica has logged text (at most 10 s).
func (r *replica) waitLog(text string) {
	r.t.Helper()
	if !waitFor(10*time.Second, func() bool { return strings.Contains(r.logs.String(), text) }) {
		r.t.Fatalf("replica %s never logged %q\n%s", r.URL, text, r.logs.String())
	}
}

// awaitCond waits until cond holds (waitFor), failing the test after d.
func awaitCond(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !waitFor(d, cond) {
		t.Fatalf("timed out after %v waiting for %s", d, what)
	}
}

// waitFor checks cond every 10 ms until it holds or limit has passed, and
// reports whether it held.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

func countRows(t *testing.T, dsn, query string, args ...any) int {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestReplicasStartingTogetherMigrateOnce(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewEmptyDatabase(t)
	a := startReplica(t, dsn, "")
	b := startReplica(t, dsn, "")
	a.waitReady()
	b.waitReady()
	all := countRows(t, dsn, `SELECT count(*) FROM schema_migrations`)
	if all == 0 {
		t.Fatal("no migrations recorded")
	}
	applied := strings.Count(a.logs.String(), "migrations applied") + strings.Count(b.logs.String(), "migrations applied")
	if applied != 1 {
		t.Fatalf("%d replicas applied migrations, want exactly 1", applied)
	}
}

func TestGracefulShutdownDrainsInFlightRequest(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	r := startReplica(t, dsn, "", "--shutdown-timeout", "10s")
	r.waitReady()

	// Send the headers, wait for the handler to ask for the body (100
	// Continue), then SIGTERM, then the body: the request must still get its
	// answer before the process exits.
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	body := "email=a%40example.com&password=xxxxxxxxxxxxxxxxxxxxxxxxxxxx"
	fmt.Fprintf(conn, "POST /login HTTP/1.1\r\nHost: %s\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: %d\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n",
		strings.TrimPrefix(r.URL, "http://"), len(body))
	answers := bufio.NewReader(conn)
	if res, err := http.ReadResponse(answers, nil); err != nil || res.StatusCode != http.StatusContinue {
		t.Fatalf("the handler never asked for the body: %v %v", err, res)
	}
	if err := r.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	r.waitLog("shutting down")
	select {
	case <-r.done:
		t.Fatalf("server exited with a request in flight: %v", r.err)
	default:
	}
	io.WriteString(conn, body)
	res, err := http.ReadResponse(answers, nil)
	if err != nil {
		t.Fatalf("in-flight request lost: %v", err)
	}
	res.Body.Close()
	if res.StatusCode == 0 {
		t.Fatal("no status")
	}
	select {
	case <-r.done:
		if r.err != nil {
			t.Fatalf("exit after drain: %v", r.err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("server did not exit after draining")
	}
	if !strings.Contains(r.logs.String(), "shutting down") {
		t.Fatal("no shutdown log line")
	}
}

func TestDatabaseOutageRecoversWithoutRestart(t *testing.T) {
	t.Parallel()
	pg := ownCluster(t)
	r := startReplica(t, pg.DSN, "")
	r.waitReady()

	noFollow := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	status := func(path string) (int, string) {
		res, err := noFollow.Get(r.URL + path)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := status("/login"); code != http.StatusSeeOther {
		t.Fatalf("/login before outage: %d", code)
	}

	pg.Stop()
	if code, _ := status("/readyz"); code != http.StatusServiceUnavailable {
		t.Fatalf("/readyz during outage: %d", code)
	}
	code, body := status("/login")
	if code != http.StatusServiceUnavailable || !strings.Contains(body, "database is unavailable") {
		t.Fatalf("/login during outage: %d %q", code, body)
	}
	if code, _ := status("/healthz"); code != http.StatusOK {
		t.Fatalf("/healthz during outage: %d", code)
	}

	pg.restart()
	r.waitReady()
	if code, _ := status("/login"); code != http.StatusSeeOther {
		t.Fatalf("/login after recovery: %d", code)
	}
	select {
	case <-r.done:
		t.Fatalf("server exited during the outage: %v", r.err)
	default:
	}
	if strings.Contains(r.logs.String(), "panic") {
		t.Fatal("panic in log")
	}
}

func TestSlowHeadersAreCutOff(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	r := startReplica(t, dsn, "", "--header-timeout", "500ms")
	r.waitReady()
	conn, err := net.Dial("tcp", strings.TrimPrefix(r.URL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Headers trickle in and never finish: the server must hang up.
	io.WriteString(conn, "GET /healthz HTTP/1.1\r\nHost: x\r\n")
	conn.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 512)
	n, err := conn.Read(buf)
	if err == nil && n > 0 && !strings.Contains(string(buf[:n]), "408") {
		t.Fatalf("server answered an unfinished request: %q", buf[:n])
	}
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatal("the connection was still open after 10 s with a 500 ms header timeout")
	}
}

// cluster is a PostgreSQL of a test's own, which the test may stop and start
// again to simulate an outage.
type cluster struct {
	t    *testing.T
	opts pgserver.Options
	*pgserver.Server
}

// ownCluster starts a private cluster in a temp folder, stopped and removed at
// cleanup. `make test` installs the PostgreSQL binaries, so their absence fails.
func ownCluster(t *testing.T) *cluster {
	t.Helper()
	if _, err := pgserver.FindBinDir(); err != nil {
		t.Fatalf("outage tests need the PostgreSQL server binaries (make test installs them): %v", err)
	}
	root, err := os.MkdirTemp("", "osfout")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(root, 0o711); err != nil {
		t.Fatal(err)
	}
	c := &cluster{t: t, opts: pgserver.Options{DataDir: filepath.Join(root, "pg"), Database: "app", Test: pgserver.TestOptions{Ephemeral: true}}}
	c.restart()
	t.Cleanup(func() {
		c.Stop()
		os.RemoveAll(root)
	})
	return c
}

// restart starts it again on the same folder and socket (the outage ends).
func (c *cluster) restart() {
	c.t.Helper()
	srv, err := pgserver.Start(context.Background(), c.opts)
	if err != nil {
		c.t.Fatal(err)
	}
	c.Server = srv
}

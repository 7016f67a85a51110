// Package mailpittest runs a real SMTP server for tests: mailpit
// (github.com/axllent/mailpit), on loopback, with the messages it received
// read back through its HTTP API. The binary is built once per machine with
// the Go toolchain into the user's cache folder (or taken from
// $OSFOUNDRY_MAILPIT), so a fresh checkout needs only the Go module proxy,
// and mailpit never becomes a requirement of the main module.
package mailpittest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Version is the mailpit the tests run.
const Version = "v1.33.1"

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary returns the path of the mailpit binary, building it on first use.
func Binary() (string, error) {
	binOnce.Do(func() { binPath, binErr = binary() })
	return binPath, binErr
}

func binary() (string, error) {
	if p := os.Getenv("OSFOUNDRY_MAILPIT"); p != "" {
		return p, nil
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("mailpittest: no cache folder for mailpit: %w (set OSFOUNDRY_MAILPIT)", err)
	}
	dir := filepath.Join(cache, "osfoundry", "mailpit-"+Version)
	bin := filepath.Join(dir, "mailpit")
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("mailpittest: %w", err)
	}
	// Test binaries of several packages may build at once: one builds, the
	// others wait for it.
	lock, err := os.OpenFile(filepath.Join(dir, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return "", fmt.Errorf("mailpittest: %w", err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return "", fmt.Errorf("mailpittest: lock: %w", err)
	}
	defer syscall.Flock(int(lock.Fd()), syscall.LOCK_UN)
	if _, err := os.Stat(bin); err == nil {
		return bin, nil
	}
	tmp, err := os.MkdirTemp(dir, "build-")
	if err != nil {
		return "", fmt.Errorf("mailpittest: %w", err)
	}
	defer os.RemoveAll(tmp)
	// go test puts its own toolchain first on the test's PATH.
	cmd := exec.Command("go", "install", "github.com/axllent/mailpit@"+Version)
	// Outside any module, so that nothing of this checkout changes.
	cmd.Dir = tmp
	cmd.Env = append(os.Environ(), "GOBIN="+tmp, "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("mailpittest: go install github.com/axllent/mailpit@%s: %v\n%s", Version, err, out)
	}
	if err := os.Rename(filepath.Join(tmp, "mailpit"), bin); err != nil {
		return "", fmt.Errorf("mailpittest: %w", err)
	}
	return bin, nil
}

// Server is a running mailpit.
type Server struct {
	// SMTPPort and API are its SMTP port on 127.0.0.1 and the origin of its
	// HTTP API.
	SMTPPort int
	API      string
	cmd      *exec.Cmd
	exited   chan struct{}
}

// FreePort returns a loopback port that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Start runs mailpit on free loopback ports until the test ends; it accepts
// any SMTP user and password, also without TLS. args are more of mailpit's
// flags.
func Start(t testing.TB, args ...string) *Server {
	return StartOn(t, FreePort(t), args...)
}

// StartOn is Start with the SMTP port chosen, for a server that comes up
// where a sender was already trying to reach one.
func StartOn(t testing.TB, smtpPort int, args ...string) *Server {
	t.Helper()
	bin, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for range 5 {
		s := &Server{SMTPPort: smtpPort, exited: make(chan struct{})}
		httpPort := FreePort(t)
		s.API = "http://127.0.0.1:" + strconv.Itoa(httpPort)
		s.cmd = exec.Command(bin, "--smtp", "127.0.0.1:"+strconv.Itoa(smtpPort), "--listen", "127.0.0.1:"+strconv.Itoa(httpPort),
			"--database", filepath.Join(t.TempDir(), "mailpit.db"), "--smtp-auth-accept-any", "--smtp-auth-allow-insecure",
			"--disable-version-check", "--quiet")
		s.cmd.Args = append(s.cmd.Args, args...)
		s.cmd.Stdout, s.cmd.Stderr = os.Stderr, os.Stderr
		if err := s.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		go func() { s.cmd.Wait(); close(s.exited) }()
		if last = s.ready(); last == nil {
			t.Cleanup(s.Stop)
			return s
		}
		s.Stop()
	}
	t.Fatalf("mailpit did not start: %v", last)
	return nil
}

// ready waits until both listeners answer, or mailpit exits (a port taken
// meanwhile).
func (s *Server) ready() error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case <-s.exited:
			return fmt.Errorf("mailpit exited")
		default:
		}
		res, err := http.Get(s.API + "/api/v1/info")
		if err == nil {
			res.Body.Close()
			if c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.SMTPPort)); err == nil {
				c.Close()
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("mailpit did not answer within 30 s")
}

// Stop ends mailpit (the test's cleanup does too).
func (s *Server) Stop() {
	if s.cmd.Process != nil {
		s.cmd.Process.Kill()
		<-s.exited
	}
}

// SMTPURL is the --smtp-url that reaches it: no TLS, with a user and a
// password (any is accepted).
func (s *Server) SMTPURL() string {
	return "smtp://osfoundry:s3cret-pass@127.0.0.1:" + strconv.Itoa(s.SMTPPort) + "?tls=none"
}

// Address is a sender or recipient of a message.
type Address struct {
	Name    string
	Address string
}

// Message is a message as mailpit's API shows it (the text with
// its line ends as \n).
type Message struct {
	ID      string
	Subject string
	From    Address
	To      []Address
	Text    string
	HTML    string
	Headers map[string][]string `json:"-"`
}

// Messages returns every message received, newest first, in full.
func (s *Server) Messages(t testing.TB) []Message {
	t.Helper()
	var list struct {
		Messages []struct{ ID string }
	}
	s.get(t, "/api/v1/messages?limit=500", &list)
	out := make([]Message, 0, len(list.Messages))
	for _, m := range list.Messages {
		var full Message
		s.get(t, "/api/v1/message/"+m.ID, &full)
		s.get(t, "/api/v1/message/"+m.ID+"/headers", &full.Headers)
		full.Text = strings.ReplaceAll(full.Text, "\r\n", "\n")
		out = append(out, full)
	}
	return out
}

// WaitFor waits until at least n messages arrived and returns them, newest
// first.
func (s *Server) WaitFor(t testing.TB, n int) []Message {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var list struct{ Total int }
		s.get(t, "/api/v1/messages?limit=1", &list)
		if list.Total >= n {
			return s.Messages(t)
		}
		if time.Now().After(deadline) {
			t.Fatalf("mailpit has %d messages after 30 s, want %d", list.Total, n)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) get(t testing.TB, path string, v any) {
	t.Helper()
	res, err := http.Get(s.API + path)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("mailpit GET %s: %s", path, res.Status)
	}
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatalf("mailpit GET %s: %v", path, err)
	}
}

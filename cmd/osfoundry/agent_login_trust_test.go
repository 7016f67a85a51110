package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// metadataServer is an authorization server whose metadata a test
// rewrites: by default a valid one on its own loopback origin.
type metadataServer struct {
	*httptest.Server
	mu      sync.Mutex // the server answers from another goroutine
	prm, as map[string]any
}

func newMetadataServer(t *testing.T, edit func(m *metadataServer)) *metadataServer {
	t.Helper()
	m := &metadataServer{}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		defer m.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/.well-known/oauth-protected-resource/mcp":
			json.NewEncoder(w).Encode(m.prm)
		case "/.well-known/oauth-authorization-server":
			json.NewEncoder(w).Encode(m.as)
		case "/register":
			w.WriteHeader(http.StatusCreated)
			w.Write([]byte(`{"client_id":"c-1"}`))
		case "/token":
			w.Write([]byte(`{"access_token":"at","token_type":"Bearer","expires_in":3600,"refresh_token":"rt","scope":"osfoundry:read"}`))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(m.Close)
	u := m.URL
	m.prm = map[string]any{"resource": u + "/mcp", "authorization_servers": []string{u}, "scopes_supported": []string{"osfoundry:read", "osfoundry:write"}}
	m.as = map[string]any{"issuer": u, "authorization_endpoint": u + "/authorize", "token_endpoint": u + "/token",
		"registration_endpoint": u + "/register", "revocation_endpoint": u + "/revoke", "code_challenge_methods_supported": []string{"S256"},
		"authorization_response_iss_parameter_supported": true}
	if edit != nil {
		edit(m)
	}
	return m
}

// withBrowser is the machine's environment with a graphical session whose
// xdg-open records what it was asked to open in the returned file.
func (m *agentMachine) withBrowser(cmd *exec.Cmd) string {
	m.t.Helper()
	bin := filepath.Join(m.root, "bin")
	opened := filepath.Join(m.root, "opened")
	os.MkdirAll(bin, 0o755)
	script := "#!/bin/sh\nprintf '%s\\n' \"$@\" >> " + opened + "\n"
	if err := os.WriteFile(filepath.Join(bin, "xdg-open"), []byte(script), 0o755); err != nil {
		m.t.Fatal(err)
	}
	cmd.Env = append(cmd.Env, "DISPLAY=:99", "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	return opened
}

func runCmd(t *testing.T, cmd *exec.Cmd) (stdout, stderr string, code int) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// TestAgentLoginChecksServerMetadata: `osfoundry agent login` uses nothing
// of a server's metadata before checking it. An authorization endpoint that
// is not an https URL on the issuer's origin (a file: URL, one carrying
// terminal escape sequences, one elsewhere), a token endpoint on another
// origin, or a resource that is not the server's own stops the login with
// the field named; no browser opens, and nothing the server sent reaches the
// terminal as a control sequence.
func TestAgentLoginChecksServerMetadata(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		edit    func(m *metadataServer)
		browser bool
		want    string
	}{
		{"file URL as the authorization endpoint", func(m *metadataServer) {
			m.as["authorization_endpoint"] = "file:///tmp/payload.desktop#"
		}, true, `authorization_endpoint "file:///tmp/payload.desktop#" must be an https URL`},
		{"escape sequences in the authorization endpoint", func(m *metadataServer) {
			m.as["authorization_endpoint"] = m.URL + "/authorize?\x1b]8;;https://evil.example\x07Click\x1b]8;;\x07\x1b[2J"
		}, false, `authorization_endpoint`},
		{"authorization endpoint on another origin", func(m *metadataServer) {
			m.as["authorization_endpoint"] = "https://evil.example/authorize"
		}, true, "is not on the authorization server's origin"},
		{"token endpoint on another origin", func(m *metadataServer) {
			m.as["token_endpoint"] = "https://evil.example/token"
		}, true, `token_endpoint "https://evil.example/token" is not on the authorization server's origin`},
		{"plain http authorization server elsewhere", func(m *metadataServer) {
			m.prm["authorization_servers"] = []string{"http://auth.example"}
		}, true, `authorization server "http://auth.example" must be an https URL`},
		{"resource of another server", func(m *metadataServer) {
			m.prm["resource"] = "https://other.example/mcp"
		}, true, `its resource "https://other.example/mcp" is not ` /* … */},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := newMetadataServer(t, c.edit)
			m := newAgentMachine(t)
			args := []string{"agent", "login", "--server", srv.URL, "--timeout", "5s"}
			if !c.browser {
				args = append(args, "--no-browser")
			}
			cmd := m.command(args...)
			opened := m.withBrowser(cmd)
			stdout, stderr, code := runCmd(t, cmd)
			if code == 0 || !strings.Contains(stderr, c.want) {
				t.Errorf("exit %d, stderr %q; want a refusal with %q", code, stderr, c.want)
			}
			if strings.ContainsAny(stdout+stderr, "\x1b\x07") || strings.Contains(stdout, "/authorize") {
				t.Errorf("printed a control sequence or a sign-in URL:\nstdout %q\nstderr %q", stdout, stderr)
			}
			if b, err := os.ReadFile(opened); err == nil {
				t.Errorf("the browser was opened on %q", b)
			}
		})
	}
}

// TestAgentLoginRefusesPlainHTTPElsewhere: a plain http:// server that is
// not this machine is refused before any request unless
// --allow-insecure-http asks for it.
func TestAgentLoginRefusesPlainHTTPElsewhere(t *testing.T) {
	t.Parallel()
	m := newAgentMachine(t)
	_, stderr, code := m.run("", "agent", "login", "--server", "http://foundry.example.com", "--no-browser")
	if code == 0 || !strings.Contains(stderr, "plain http to another machine") || !strings.Contains(stderr, "--allow-insecure-http") {
		t.Fatalf("exit %d %q", code, stderr)
	}
	_, stderr, code = m.run("", "agent", "login", "--server", "http://foundry.invalid", "--no-browser", "--allow-insecure-http")
	if code == 0 || !strings.Contains(stderr, "cannot reach the osFoundry server at http://foundry.invalid") {
		t.Fatalf("with --allow-insecure-http: exit %d %q", code, stderr)
	}
}

// TestAgentLoginCallbackNeedsIss: the server says it adds iss to its
// answers (RFC 9207), so the loopback callback refuses one without it: the
// browser is told, and login fails without asking for a token.
func TestAgentLoginCallbackNeedsIss(t *testing.T) {
	t.Parallel()
	srv := newMetadataServer(t, nil)
	m := newAgentMachine(t)
	cmd := m.command("agent", "login", "--server", srv.URL, "--no-browser", "--timeout", "20s")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var auth *url.URL
	deadline := time.After(15 * time.Second)
	for auth == nil {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("login ended before printing a URL: %s", stderr.String())
			}
			if s := strings.TrimSpace(l); strings.HasPrefix(s, srv.URL+"/authorize?") {
				auth, _ = url.Parse(s)
			}
		case <-deadline:
			t.Fatal("login printed no URL")
		}
	}
	q := auth.Query()
	res, err := http.Get(q.Get("redirect_uri") + "?" + url.Values{"code": {"c"}, "state": {q.Get("state")}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	var page bytes.Buffer
	page.ReadFrom(res.Body)
	res.Body.Close()
	if !strings.Contains(page.String(), "osFoundry was not connected") || !strings.Contains(page.String(), "carries no iss") {
		t.Errorf("callback page: %s", page.String())
	}
	for range lines {
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(stderr.String(), "carries no iss") {
		t.Fatalf("login: %v %s", err, stderr.String())
	}
}

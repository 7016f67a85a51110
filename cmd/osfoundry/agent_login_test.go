package main

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAgentLoginThroughConsent(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	out := m.login(s.URL, s.owner(t), "--handle", "widgets-bot")
	for _, want := range []string{"open this URL in a browser", "Connected " + m.checkout, "Claimed the profile widgets-bot (sender slug ext-widgets-bot)"} {
		if !strings.Contains(out, want) {
			t.Errorf("login output lacks %q:\n%s", want, out)
		}
	}
	c, path := m.credentials(), m.credentialsPath()
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("credentials mode %v, want 0600", fi.Mode().Perm())
	}
	if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm() != 0o700 {
		t.Errorf("credentials folder mode %v, want 0700", fi.Mode().Perm())
	}
	if c.Checkout != m.checkout || c.Server != s.URL || c.Resource != s.URL+"/mcp" || c.RefreshToken == "" ||
		c.SenderSlug != "ext-widgets-bot" || !strings.Contains(c.Scope, "osfoundry:write") {
		t.Errorf("credentials: %+v", c)
	}

	stdout, stderr, code := m.run("", "agent", "status")
	if code != 0 || !strings.Contains(stdout, "Connection:   working") {
		t.Errorf("status: exit %d\n%s%s", code, stdout, stderr)
	}

	// A second login replaces the credentials; the first ones are revoked.
	// It keeps the checkout's registration, whose connection the consent
	// page preselects: still one agent, profile and slug kept.
	conn := s.newestConnection(t)
	m.login(s.URL, s.owner(t))
	if n := countRows(t, s.dsn, `SELECT count(*) FROM connections WHERE workspace_id = $1 AND revoked_at IS NULL`, s.w.owner.WorkspaceID); n != 1 || s.newestConnection(t) != conn {
		t.Errorf("after a second login: %d live connections, newest %d, want only %d", n, s.newestConnection(t), conn)
	}
	if n := countRows(t, s.dsn, `SELECT count(*) FROM agent_profiles WHERE connection_id = $1 AND handle = 'widgets-bot'`, conn); n != 1 {
		t.Error("the profile did not survive the second login")
	}
	second := m.credentials()
	if second.ClientID != c.ClientID {
		t.Errorf("the second login registered again: client %s, was %s", second.ClientID, c.ClientID)
	}
	if r, err := callTool(s.URL, second.AccessToken, "list_sessions", nil); err != nil || r.status != http.StatusOK {
		t.Errorf("the new credentials do not work: %v %+v", err, r)
	}
	res, err := http.PostForm(s.URL+"/token", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {c.RefreshToken},
		"client_id": {c.ClientID}, "resource": {c.Resource}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusBadRequest {
		t.Errorf("the replaced refresh token still refreshes: %d", res.StatusCode)
	}

	stdout, stderr, code = m.run("", "agent", "logout")
	if code != 0 || !strings.Contains(stdout, "Disconnected") {
		t.Errorf("logout: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("credentials still there after logout: %v", err)
	}
	_, stderr, code = m.run("", "agent", "status", "--server", s.URL)
	if code == 0 || !strings.Contains(stderr, "is not connected to "+s.URL) {
		t.Errorf("status after logout: exit %d %s", code, stderr)
	}
}

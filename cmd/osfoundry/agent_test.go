package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/jackc/pgx/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/osfoundry/osfoundry/store"
	"github.com/osfoundry/osfoundry/store/storetest"
)

// These tests run `osfoundry agent …` as Claude Code would, as a separate
// process against a real server, on a "machine" of their own: config, state
// and home folders in a temp dir, and a git checkout.

// agentMachine is one user's machine for the agent side.
type agentMachine struct {
	t        *testing.T
	root     string
	checkout string
}

func newAgentMachine(t *testing.T) *agentMachine {
	t.Helper()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m := &agentMachine{t: t, root: root, checkout: filepath.Join(root, "work", "widgets")}
	for _, d := range []string{m.checkout, filepath.Join(root, "home")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	m.git("init", "-q", "-b", "fix/rounding")
	m.git("remote", "add", "origin", "git@github.com:acme/widgets.git")
	m.git("-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-q", "--allow-empty", "-m", "init")
	return m
}

func (m *agentMachine) git(args ...string) {
	m.t.Helper()
	cmd := exec.Command("git", append([]string{"-C", m.checkout}, args...)...)
	cmd.Env = m.env()
	if out, err := cmd.CombinedOutput(); err != nil {
		m.t.Fatalf("git %v: %v\n%s", args, err, out)
	}
}

// env is the environment of the machine's processes: its own folders, and
// nothing of the test runner's Claude Code or desktop session.
func (m *agentMachine) env() []string {
	var env []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "CLAUDE_PROJECT_DIR", "DISPLAY", "WAYLAND_DISPLAY",
			"GIT_DIR", "GIT_WORK_TREE", "GIT_CONFIG_GLOBAL":
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+filepath.Join(m.root, "home"), "XDG_CONFIG_HOME="+filepath.Join(m.root, "config"),
		"XDG_STATE_HOME="+filepath.Join(m.root, "state"), "XDG_CACHE_HOME="+filepath.Join(m.root, "cache"))
}

func (m *agentMachine) command(args ...string) *exec.Cmd {
	cmd := exec.Command(binary(m.t), args...)
	cmd.Dir = m.checkout
	cmd.Env = m.env()
	return cmd
}

// run runs `osfoundry args…` to the end.
func (m *agentMachine) run(stdin string, args ...string) (stdout, stderr string, code int) {
	m.t.Helper()
	cmd := m.command(args...)
	cmd.Stdin = strings.NewReader(stdin)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if err != nil && cmd.ProcessState == nil {
		m.t.Fatal(err)
	}
	return o.String(), e.String(), cmd.ProcessState.ExitCode()
}

// hookRun is one run of `osfoundry agent hook`.
type hookRun struct {
	stdout, stderr string
	code           int
	took           time.Duration
}

// fixture is a hook input from testdata, its cwd set to the checkout.
func (m *agentMachine) fixture(event string, edit func(map[string]any)) []byte {
	m.t.Helper()
	b, err := os.ReadFile(filepath.Join("agent", "testdata", "hooks", event+".json"))
	if err != nil {
		m.t.Fatal(err)
	}
	var in map[string]any
	if err := json.Unmarshal(b, &in); err != nil {
		m.t.Fatal(err)
	}
	in["cwd"] = m.checkout
	if edit != nil {
		edit(in)
	}
	out, _ := json.Marshal(in)
	return out
}

// hook runs the hook with stdin as Claude Code would, from a subfolder of
// the checkout (Claude Code runs hooks in its current folder).
func (m *agentMachine) hook(server string, stdin io.Reader) hookRun {
	m.t.Helper()
	cmd := m.command("agent", "hook", "--server", server)
	sub := filepath.Join(m.checkout, "src")
	os.MkdirAll(sub, 0o755)
	cmd.Dir = sub
	cmd.Stdin = stdin
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	start := time.Now()
	err := cmd.Run()
	took := time.Since(start)
	if err != nil && cmd.ProcessState == nil {
		m.t.Fatal(err)
	}
	return hookRun{stdout: o.String(), stderr: e.String(), code: cmd.ProcessState.ExitCode(), took: took}
}

func (m *agentMachine) hookEvent(server, event string, edit func(map[string]any)) hookRun {
	m.t.Helper()
	return m.hook(server, bytes.NewReader(m.fixture(event, edit)))
}

// credentials are what login saved, read as the documented JSON file in
// <config>/osfoundry/agents (the machine has one login at a time).
type credentials struct {
	Server       string    `json:"server"`
	Checkout     string    `json:"checkout"`
	Resource     string    `json:"resource"`
	ClientID     string    `json:"client_id"`
	AccessToken  string    `json:"access_token"`
	ExpiresAt    time.Time `json:"expires_at"`
	RefreshToken string    `json:"refresh_token"`
	Scope        string    `json:"scope"`
	SenderSlug   string    `json:"sender_slug"`
}

func (m *agentMachine) credentialsPath() string {
	m.t.Helper()
	files, _ := filepath.Glob(filepath.Join(m.root, "config", "osfoundry", "agents", "*.json"))
	if len(files) != 1 {
		m.t.Fatalf("%d credentials files, want 1: %v", len(files), files)
	}
	return files[0]
}

func (m *agentMachine) credentials() *credentials {
	m.t.Helper()
	b, err := os.ReadFile(m.credentialsPath())
	if err != nil {
		m.t.Fatal(err)
	}
	var c credentials
	if err := json.Unmarshal(b, &c); err != nil {
		m.t.Fatal(err)
	}
	return &c
}

// expireAccessToken makes the saved access token look expired, as an hour
// later, keeping every other field of the file.
func (m *agentMachine) expireAccessToken() {
	m.t.Helper()
	path := m.credentialsPath()
	b, err := os.ReadFile(path)
	if err != nil {
		m.t.Fatal(err)
	}
	var c map[string]any
	json.Unmarshal(b, &c)
	c["expires_at"] = time.Now().Add(-time.Minute).Format(time.RFC3339Nano)
	b, _ = json.Marshal(c)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		m.t.Fatal(err)
	}
}

// resetThrottle forgets the last mail checks, as if 30 s had passed.
func (m *agentMachine) resetThrottle() {
	os.RemoveAll(filepath.Join(m.root, "state", "osfoundry", "throttle"))
}

// hookLog is the hook's log, <state>/osfoundry/hook.log.
func (m *agentMachine) hookLog() string {
	b, _ := os.ReadFile(filepath.Join(m.root, "state", "osfoundry", "hook.log"))
	return string(b)
}

// signInOwner returns a browser (cookie jar, no redirects followed) signed
// in as the world's owner.
func signInOwner(t *testing.T, base string, w *world) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	browser := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	res, err := browser.Get(base + "/login")
	if err != nil {
		t.Fatal(err)
	}
	doc, _ := goquery.NewDocumentFromReader(res.Body)
	res.Body.Close()
	csrf, _ := doc.Find(`input[name="_csrf"]`).Attr("value")
	res, err = browser.PostForm(base+"/login", url.Values{"_csrf": {csrf}, "email": {w.owner.Email}, "password": {"long enough password"}})
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("owner sign-in: %d", res.StatusCode)
	}
	return browser
}

// approveConsent opens an authorization URL in the owner's browser, approves
// the consent form as it stands (every project ticked), and returns where the
// server redirects.
func approveConsent(t *testing.T, browser *http.Client, authURL string) string {
	t.Helper()
	res, err := browser.Get(authURL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("authorize: %d %s", res.StatusCode, page)
	}
	doc, _ := goquery.NewDocumentFromReader(bytes.NewReader(page))
	form := url.Values{}
	doc.Find(`form[data-testid="consent-form"] input[type="hidden"], form[data-testid="consent-form"] input[type="checkbox"]`).Each(func(_ int, s *goquery.Selection) {
		n, _ := s.Attr("name")
		v, _ := s.Attr("value")
		form.Add(n, v)
	})
	form.Set("decision", "approve")
	u, _ := url.Parse(authURL)
	res, err = browser.PostForm(u.Scheme+"://"+u.Host+"/authorize", form)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	loc := res.Header.Get("Location")
	if res.StatusCode != http.StatusFound && res.StatusCode != http.StatusSeeOther || loc == "" {
		t.Fatalf("consent: %d %q", res.StatusCode, loc)
	}
	return loc
}

// login runs `osfoundry agent login --no-browser` and approves the printed
// URL headlessly, as the owner would in a browser. It returns the CLI's output.
func (m *agentMachine) login(server string, browser *http.Client, extra ...string) string {
	m.t.Helper()
	cmd := m.command(append([]string{"agent", "login", "--server", server, "--no-browser", "--timeout", "30s"}, extra...)...)
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		m.t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		m.t.Fatal(err)
	}
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(pipe)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var out strings.Builder
	authURL := ""
	for authURL == "" {
		select {
		case l, ok := <-lines:
			if !ok {
				cmd.Wait()
				m.t.Fatalf("login ended before printing a URL:\n%s%s", out.String(), stderr.String())
			}
			out.WriteString(l + "\n")
			if s := strings.TrimSpace(l); strings.Contains(s, "/authorize?") {
				authURL = s
			}
		case <-time.After(20 * time.Second):
			cmd.Process.Kill()
			m.t.Fatalf("login printed no URL:\n%s", out.String())
		}
	}
	callback := approveConsent(m.t, browser, authURL)
	res, err := http.Get(callback) // the browser follows the redirect to the CLI's loopback port
	if err != nil {
		m.t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(page), "osFoundry is connected") {
		m.t.Fatalf("callback page: %s", page)
	}
	for l := range lines {
		out.WriteString(l + "\n")
	}
	if err := cmd.Wait(); err != nil {
		m.t.Fatalf("login: %v\n%s%s", err, out.String(), stderr.String())
	}
	return out.String()
}

// agentServer is a real server process with a world (an owner, project P
// and team session S) in its own database, reached through a gate that can
// hold answers back or close.
type agentServer struct {
	*replica
	URL    string // the gate, the server's public base URL
	dsn    string
	w      *world
	gate   *httptest.Server
	silent atomic.Bool // the gate takes requests and never answers
}

func startAgentServer(t *testing.T) *agentServer {
	t.Helper()
	dsn := storetest.NewDatabase(t)
	addr := freePort(t)
	s := &agentServer{URL: "http://" + addr, dsn: dsn}
	s.replica = startReplica(t, dsn, s.URL)
	s.waitReady()
	s.w = newWorld(t, dsn, s.URL, 0)
	proxy := roundRobinHandler(s.replica)
	s.gate = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.silent.Load() {
			// Until the client gives up: reading the body to its end lets
			// the server notice a closed connection.
			io.Copy(io.Discard, r.Body)
			select {
			case <-r.Context().Done():
			case <-time.After(30 * time.Second):
			}
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	s.gate.Listener.Close()
	s.gate.Listener = l
	s.gate.Start()
	t.Cleanup(s.gate.Close)
	return s
}

// newestConnection is the id of the connection a login just created.
func (s *agentServer) newestConnection(t *testing.T) int64 {
	return int64(countRows(t, s.dsn, `SELECT max(id)::int FROM connections WHERE workspace_id = $1`, s.w.owner.WorkspaceID))
}

// status is the agent's self-reported status.
func (s *agentServer) status(t *testing.T, conn int64) (repo, branch, task string) {
	t.Helper()
	ctx := context.Background()
	c, err := pgx.Connect(ctx, s.dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	err = c.QueryRow(ctx, `SELECT coalesce(repo, '<null>'), coalesce(branch, '<null>'), coalesce(task, '<null>') FROM statuses WHERE connection_id = $1`, conn).
		Scan(&repo, &branch, &task)
	if err != nil {
		t.Fatalf("status of connection %d: %v", conn, err)
	}
	return
}

// mcpRequests counts the server's /mcp requests so far (one log line each).
func (s *agentServer) mcpRequests() int { return strings.Count(s.replica.logs.String(), "path=/mcp") }

// connectAgent logs a machine in (claiming handle), and invites the new
// connection to the world's session. It returns the connection's id.
func (s *agentServer) connectAgent(t *testing.T, m *agentMachine, handle string) int64 {
	t.Helper()
	out := m.login(s.URL, signInOwner(t, s.URL, s.w), "--handle", handle, "--name", "Widgets agent")
	if !strings.Contains(out, "Claimed the profile "+handle) {
		t.Fatalf("login output:\n%s", out)
	}
	conn := s.newestConnection(t)
	if err := s.w.st.Invite(context.Background(), s.w.owner.WorkspaceID, s.w.session.ID, conn, store.RoleContributor); err != nil {
		t.Fatal(err)
	}
	return conn
}

// hookAnswer checks that a hook's stdout is exactly the JSON object Claude
// Code validates for an event that takes context, and returns the context.
func hookAnswer(t *testing.T, event string, r hookRun) string {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("%s: exit %d, stderr %q", event, r.code, r.stderr)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal([]byte(r.stdout), &top); err != nil {
		t.Fatalf("%s: stdout is not a JSON object: %q", event, r.stdout)
	}
	var inner map[string]json.RawMessage
	json.Unmarshal(top["hookSpecificOutput"], &inner)
	if len(top) != 1 || len(inner) != 2 {
		t.Fatalf("%s: want exactly {hookSpecificOutput: {hookEventName, additionalContext}}, got %s", event, r.stdout)
	}
	var name, text string
	if json.Unmarshal(inner["hookEventName"], &name) != nil || name != event || json.Unmarshal(inner["additionalContext"], &text) != nil || text == "" {
		t.Fatalf("%s: bad answer %s", event, r.stdout)
	}
	return text
}

func quiet(t *testing.T, what string, r hookRun) {
	t.Helper()
	if r.code != 0 || r.stdout != "" {
		t.Fatalf("%s: want exit 0 and no output, got exit %d, stdout %q, stderr %q", what, r.code, r.stdout, r.stderr)
	}
}

// agentCall calls a tool as the machine's connection, with its saved token.
func (m *agentMachine) agentCall(server, tool string, args any) *toolReply {
	m.t.Helper()
	r, err := callTool(server, m.credentials().AccessToken, tool, args)
	if err != nil || r.rpcErr != "" {
		m.t.Fatalf("%s: %v %+v", tool, err, r)
	}
	return r
}

func TestAgentLoginThroughConsent(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	out := m.login(s.URL, signInOwner(t, s.URL, s.w), "--handle", "widgets-bot")
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
	// The client registers the same metadata again, so the server continues
	// the checkout's connection: still one agent, profile and slug kept.
	conn := s.newestConnection(t)
	m.login(s.URL, signInOwner(t, s.URL, s.w))
	if n := countRows(t, s.dsn, `SELECT count(*) FROM connections WHERE workspace_id = $1 AND revoked_at IS NULL`, s.w.owner.WorkspaceID); n != 1 || s.newestConnection(t) != conn {
		t.Errorf("after a second login: %d live connections, newest %d, want only %d", n, s.newestConnection(t), conn)
	}
	if n := countRows(t, s.dsn, `SELECT count(*) FROM agent_profiles WHERE connection_id = $1 AND handle = 'widgets-bot'`, conn); n != 1 {
		t.Error("the profile did not survive the second login")
	}
	second := m.credentials()
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

func TestAgentHookReportsStatusAndBringsMail(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "widgets-bot")
	ctx := context.Background()

	t.Run("SessionStart sets repo and branch", func(t *testing.T) {
		r := m.hookEvent(s.URL, "SessionStart", nil)
		if r.code != 0 || r.stdout != "" {
			t.Fatalf("no mail yet: want no output, got exit %d %q", r.code, r.stdout)
		}
		repo, branch, _ := s.status(t, conn)
		if repo != "acme/widgets" || branch != "fix/rounding" {
			t.Fatalf("status after SessionStart: repo %q branch %q", repo, branch)
		}
	})

	t.Run("SessionEnd clears the task", func(t *testing.T) {
		m.agentCall(s.URL, "set_status", map[string]any{"task": "Fixing the rounding of totals"})
		if _, _, task := s.status(t, conn); task != "Fixing the rounding of totals" {
			t.Fatalf("task %q", task)
		}
		quiet(t, "SessionEnd", m.hookEvent(s.URL, "SessionEnd", nil))
		repo, branch, task := s.status(t, conn)
		if task != "<null>" || repo != "acme/widgets" || branch != "fix/rounding" {
			t.Fatalf("after SessionEnd: repo %q branch %q task %q", repo, branch, task)
		}
	})

	t.Run("events the hook does not act on, and subagents", func(t *testing.T) {
		before := s.mcpRequests()
		quiet(t, "Stop", m.hookEvent(s.URL, "Stop", nil))
		m.resetThrottle()
		quiet(t, "PostToolUse in a subagent", m.hookEvent(s.URL, "PostToolUse", func(in map[string]any) { in["agent_id"] = "agent-1"; in["agent_type"] = "Explore" }))
		if n := s.mcpRequests() - before; n != 0 {
			t.Fatalf("%d MCP requests for events the hook ignores", n)
		}
	})

	// Mail: the agent posts a note, the owner replies to its slug and writes
	// to the whole session.
	posted := m.agentCall(s.URL, "post_session_note", map[string]any{"session_type": s.w.session.Type, "session_id": s.w.session.PublicID,
		"subject": "Started on the rounding bug", "body": "Looking at totals.", "idempotency_key": "start-1"})
	noteID := int64(posted.data["id"].(float64))
	reply, _, err := s.w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: s.w.owner.WorkspaceID, SessionID: s.w.session.ID, OwnerID: s.w.owner.ID,
		Type: store.MessageReply, ReplyTo: noteID, Subject: "Use banker's rounding", Body: "Round half to even,\nas the ledger does."})
	if err != nil {
		t.Fatal(err)
	}
	broadcast, _, err := s.w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: s.w.owner.WorkspaceID, SessionID: s.w.session.ID, OwnerID: s.w.owner.ID,
		Type: store.MessageNote, Subject: "Release on Friday", Body: "Everything merged by Thursday."})
	if err != nil {
		t.Fatal(err)
	}

	// The mail subtests rest on the unread hint of SPEC §9: every tool result
	// of a connection with unread mail carries "unread".
	if m.agentCall(s.URL, "list_sessions", nil).data["unread"] == nil {
		t.Fatal("list_sessions carries no \"unread\" although two notes wait for the agent")
	}

	t.Run("UserPromptSubmit brings the replies as context, and they count as read", func(t *testing.T) {
		m.resetThrottle()
		text := hookAnswer(t, "UserPromptSubmit", m.hookEvent(s.URL, "UserPromptSubmit", nil))
		for _, want := range []string{"2 unread notes", fmt.Sprintf("note %d", reply.ID), "Use banker's rounding", "Round half to even,\nas the ledger does.",
			fmt.Sprintf("note %d", broadcast.ID), "Release on Friday", "to this agent (ext-widgets-bot)", "to the whole session", s.w.session.PublicID} {
			if !strings.Contains(text, want) {
				t.Errorf("context lacks %q:\n%s", want, text)
			}
		}
		if strings.Contains(text, "Started on the rounding bug") {
			t.Errorf("the agent's own note came back as mail:\n%s", text)
		}
		if r := m.agentCall(s.URL, "list_sessions", nil); r.data["unread"] != nil {
			t.Errorf("still unread after the hook read them: %v", r.data["unread"])
		}
	})

	t.Run("UserPromptSubmit and PostToolUse check mail at most every 30 s", func(t *testing.T) {
		m.resetThrottle()
		m.hookEvent(s.URL, "UserPromptSubmit", nil)
		later, _, err := s.w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: s.w.owner.WorkspaceID, SessionID: s.w.session.ID, OwnerID: s.w.owner.ID,
			Type: store.MessageReply, ReplyTo: noteID, Subject: "One more thing", Body: "Add a test."})
		if err != nil {
			t.Fatal(err)
		}
		before := s.mcpRequests()
		quiet(t, "PostToolUse right after a check", m.hookEvent(s.URL, "PostToolUse", nil))
		quiet(t, "UserPromptSubmit right after a check", m.hookEvent(s.URL, "UserPromptSubmit", nil))
		if n := s.mcpRequests() - before; n != 0 {
			t.Fatalf("%d MCP requests within the 30 s window", n)
		}
		m.resetThrottle() // 30 s later
		r := m.hookEvent(s.URL, "PostToolUse", nil)
		if n := s.mcpRequests() - before; n == 0 {
			t.Fatal("no mail check once the 30 s had passed")
		}
		text := hookAnswer(t, "PostToolUse", r)
		if !strings.Contains(text, fmt.Sprintf("note %d", later.ID)) || !strings.Contains(text, "1 unread note") || strings.Contains(text, "Use banker's rounding") {
			t.Errorf("PostToolUse context:\n%s", text)
		}
	})

	t.Run("SessionStart adds unread mail", func(t *testing.T) {
		n, _, err := s.w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: s.w.owner.WorkspaceID, SessionID: s.w.session.ID, OwnerID: s.w.owner.ID,
			Type: store.MessageReply, ReplyTo: noteID, Subject: "While you were away", Body: "CI is green again."})
		if err != nil {
			t.Fatal(err)
		}
		text := hookAnswer(t, "SessionStart", m.hookEvent(s.URL, "SessionStart", func(in map[string]any) { in["source"] = "resume" }))
		if !strings.Contains(text, fmt.Sprintf("note %d", n.ID)) || !strings.Contains(text, "CI is green again.") {
			t.Errorf("SessionStart context:\n%s", text)
		}
	})

	t.Run("median run time", func(t *testing.T) {
		var took []time.Duration
		for range 20 {
			m.resetThrottle()
			r := m.hookEvent(s.URL, "UserPromptSubmit", nil)
			quiet(t, "UserPromptSubmit without mail", r)
			took = append(took, r.took)
		}
		slices.Sort(took)
		t.Logf("osfoundry agent hook, UserPromptSubmit with a mail check (one list_sessions call): median %v, max %v over %d runs",
			took[len(took)/2].Round(100*time.Microsecond), took[len(took)-1].Round(100*time.Microsecond), len(took))
	})

	if log := m.hookLog(); log != "" {
		t.Errorf("hook log has lines although nothing failed:\n%s", log)
	}
}

func TestAgentHookFailsQuietly(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	check := func(t *testing.T, m *agentMachine, r hookRun, logWants string) {
		t.Helper()
		quiet(t, "hook", r)
		if r.stderr != "" {
			t.Errorf("stderr %q", r.stderr)
		}
		if r.took > hookLimitPlusStart {
			t.Errorf("took %v", r.took)
		}
		if log := m.hookLog(); !strings.Contains(log, logWants) {
			t.Errorf("hook log lacks %q:\n%s", logWants, log)
		}
	}

	t.Run("malformed input", func(t *testing.T) {
		m := newAgentMachine(t)
		check(t, m, m.hook(s.URL, strings.NewReader(`{"hook_event_name": "SessionStart", `)), "read the hook event")
	})

	t.Run("input that never ends", func(t *testing.T) {
		m := newAgentMachine(t)
		// An *os.File is handed to the process as is, so the run does not
		// wait for the test to close it.
		pr, pw, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer pr.Close()
		defer pw.Close()
		pw.Write([]byte(`{"hook_event_name": "SessionStart"`)) // and then nothing, stdin stays open
		check(t, m, m.hook(s.URL, pr), "gave up at the 2s limit")
	})

	t.Run("no credentials", func(t *testing.T) {
		m := newAgentMachine(t)
		check(t, m, m.hookEvent(s.URL, "SessionStart", nil), "is not connected to "+s.URL)
	})

	t.Run("revoked connection", func(t *testing.T) {
		m := newAgentMachine(t)
		conn := s.connectAgent(t, m, "revoked-bot")
		if err := s.w.st.RevokeConnection(context.Background(), s.w.owner.WorkspaceID, conn); err != nil {
			t.Fatal(err)
		}
		check(t, m, m.hookEvent(s.URL, "SessionStart", nil), "this checkout's connection to "+s.URL+" was revoked; run `osfoundry agent login --server "+s.URL+"` again")
		if _, stderr, code := m.run("", "agent", "status"); code != 1 || !strings.Contains(stderr, "was revoked; run `osfoundry agent login") {
			t.Errorf("status of a revoked connection: exit %d %q", code, stderr)
		}
	})

	t.Run("server that never answers", func(t *testing.T) {
		m := newAgentMachine(t)
		s.connectAgent(t, m, "patient-bot")
		s.silent.Store(true)
		defer s.silent.Store(false)
		check(t, m, m.hookEvent(s.URL, "UserPromptSubmit", nil), "context deadline exceeded")
	})

	t.Run("token endpoint that never answers", func(t *testing.T) {
		m := newAgentMachine(t)
		s.connectAgent(t, m, "refreshing-bot")
		m.expireAccessToken() // the hook must refresh first
		s.silent.Store(true)
		defer s.silent.Store(false)
		check(t, m, m.hookEvent(s.URL, "SessionEnd", nil), "context deadline exceeded")
	})

	// Last: the server goes away for good.
	t.Run("server down", func(t *testing.T) {
		m := newAgentMachine(t)
		s.connectAgent(t, m, "lonely-bot")
		s.gate.Close()
		check(t, m, m.hookEvent(s.URL, "SessionStart", nil), "cannot reach the osFoundry server at "+s.URL)
		if _, stderr, code := m.run("", "agent", "status"); code != 1 || !strings.Contains(stderr, "cannot reach the osFoundry server at "+s.URL) {
			t.Errorf("status with the server down: exit %d %q", code, stderr)
		}
	})
}

// hookLimitPlusStart is the hook's 2 s limit plus room for starting a
// process on a busy machine.
const hookLimitPlusStart = 2500 * time.Millisecond

func TestAgentHookRefreshesOnceForConcurrentRuns(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "busy-bot")
	before := m.credentials()
	m.expireAccessToken()
	tokens := strings.Count(s.replica.logs.String(), "path=/token")

	// Parallel tool calls end in parallel PostToolUse hooks, all finding the
	// access token expired at once; SessionEnd runs beside them.
	var wg sync.WaitGroup
	runs := make([]hookRun, 6)
	for i := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			event := "SessionEnd"
			if i%2 == 0 {
				event = "PostToolUse"
			}
			runs[i] = m.hookEvent(s.URL, event, nil)
		}()
	}
	wg.Wait()
	for i, r := range runs {
		if r.code != 0 || r.stdout != "" && !strings.HasPrefix(r.stdout, `{"hookSpecificOutput"`) {
			t.Errorf("run %d: exit %d %q", i, r.code, r.stdout)
		}
	}
	if n := strings.Count(s.replica.logs.String(), "path=/token") - tokens; n != 1 {
		t.Errorf("%d refreshes for concurrent runs, want exactly 1 (they share the rotated pair)", n)
	}
	after := m.credentials()
	if after.RefreshToken == before.RefreshToken || after.AccessToken == before.AccessToken || !after.ExpiresAt.After(time.Now().Add(30*time.Minute)) {
		t.Errorf("credentials not rotated: %+v", after)
	}
	if _, _, task := s.status(t, conn); task != "<null>" {
		t.Errorf("SessionEnd did not clear the task: %q", task)
	}
	if log := m.hookLog(); log != "" {
		t.Errorf("hook log:\n%s", log)
	}
}

func TestAgentInstallCommand(t *testing.T) {
	t.Parallel()
	m := newAgentMachine(t)
	server := "http://127.0.0.1:9" // not contacted
	stdout, stderr, code := m.run("", "agent", "install", "claude-code", "--server", server, "--dry-run")
	if code != 0 || !strings.Contains(stdout, "+ hooks.SessionStart: ") || !strings.Contains(stdout, "Dry run: nothing was written.") {
		t.Fatalf("dry run: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(m.checkout, ".mcp.json")); !os.IsNotExist(err) {
		t.Fatalf("dry run wrote .mcp.json: %v", err)
	}
	stdout, stderr, code = m.run("", "agent", "install", "claude-code", "--server", server)
	if code != 0 || !strings.Contains(stdout, "Not connected yet") {
		t.Fatalf("install: exit %d\n%s%s", code, stdout, stderr)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
	}
	b, _ := os.ReadFile(filepath.Join(m.checkout, ".claude", "settings.local.json"))
	json.Unmarshal(b, &settings)
	want := binary(t) + " agent hook --server " + server
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"} {
		if len(settings.Hooks[ev]) != 1 || settings.Hooks[ev][0].Hooks[0].Command != want {
			t.Errorf("%s hooks: %+v", ev, settings.Hooks[ev])
		}
	}
	// The hook command as written runs (here: not connected, so quietly).
	cmd := exec.Command("sh", "-c", want)
	cmd.Dir, cmd.Env, cmd.Stdin = m.checkout, m.env(), bytes.NewReader(m.fixture("SessionStart", nil))
	if out, err := cmd.Output(); err != nil || len(out) != 0 {
		t.Errorf("installed hook command: %v %q", err, out)
	}
	if out, _, _ := m.run("", "agent", "install", "claude-code", "--server", server); !strings.Contains(out, "already installed") {
		t.Errorf("second install:\n%s", out)
	}
	if ignored := exec.Command("git", "-C", m.checkout, "check-ignore", "-q", ".claude/settings.local.json"); ignored.Run() != nil {
		t.Error("settings.local.json is not ignored by git after install")
	}
	stdout, _, code = m.run("", "agent", "uninstall", "claude-code", "--server", server)
	if code != 0 || !strings.Contains(stdout, "- hooks.PostToolUse") {
		t.Errorf("uninstall:\n%s", stdout)
	}
	for _, f := range []string{".mcp.json", ".claude/settings.local.json"} {
		if _, err := os.Stat(filepath.Join(m.checkout, f)); !os.IsNotExist(err) {
			t.Errorf("%s left after uninstall: %v", f, err)
		}
	}
}

func TestAgentMCPBridgeIsTheHooksConnection(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "bridge-bot")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// Claude Code starts the server entry install writes: `osfoundry agent mcp`
	// over stdio. The go-sdk client stands in for it.
	connect := func(m *agentMachine) *mcp.ClientSession {
		t.Helper()
		client := mcp.NewClient(&mcp.Implementation{Name: "stdio-client", Version: "1"}, nil)
		sess, err := client.Connect(ctx, &mcp.CommandTransport{Command: m.command("agent", "mcp", "--server", s.URL)}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { sess.Close() })
		return sess
	}
	call := func(sess *mcp.ClientSession, name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return res
	}
	text := func(res *mcp.CallToolResult) string {
		var b strings.Builder
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				b.WriteString(tc.Text)
			}
		}
		return b.String()
	}

	sess := connect(m)
	tools, err := sess.ListTools(ctx, nil)
	if err != nil || !slices.ContainsFunc(tools.Tools, func(tl *mcp.Tool) bool { return tl.Name == "set_status" }) {
		t.Fatalf("tools/list through the bridge: %v", err)
	}
	if res := call(sess, "set_status", map[string]any{"task": "Through the bridge"}); res.IsError {
		t.Fatalf("set_status: %s", text(res))
	}
	if _, _, task := s.status(t, conn); task != "Through the bridge" {
		t.Fatalf("the bridge's set_status did not reach the login's connection: task %q", task)
	}
	quiet(t, "SessionEnd", m.hookEvent(s.URL, "SessionEnd", nil))
	if _, _, task := s.status(t, conn); task != "<null>" {
		t.Fatalf("the hook's SessionEnd did not clear the bridge's task: %q", task)
	}

	t.Run("an expired access token is refreshed", func(t *testing.T) {
		before := m.credentials()
		m.expireAccessToken()
		if res := call(connect(m), "list_sessions", nil); res.IsError {
			t.Fatalf("list_sessions after expiry: %s", text(res))
		}
		if after := m.credentials(); after.RefreshToken == before.RefreshToken {
			t.Fatal("the bridge did not rotate the refresh token")
		}
	})

	t.Run("a checkout without credentials is told to log in", func(t *testing.T) {
		other := newAgentMachine(t)
		sess := connect(other)
		if _, err := sess.ListTools(ctx, nil); err != nil {
			t.Fatalf("tools/list needs no sign-in: %v", err)
		}
		res := call(sess, "list_agents", nil)
		if !res.IsError || !strings.Contains(text(res), "is not connected to "+s.URL+": run `osfoundry agent login --server "+s.URL+"`") {
			t.Fatalf("without credentials: %v %q", res.IsError, text(res))
		}
	})

	t.Run("a revoked connection says so", func(t *testing.T) {
		if err := s.w.st.RevokeConnection(ctx, s.w.owner.WorkspaceID, conn); err != nil {
			t.Fatal(err)
		}
		res := call(sess, "list_sessions", nil)
		if !res.IsError || !strings.Contains(text(res), "this checkout's connection to "+s.URL+" was revoked; run `osfoundry agent login --server "+s.URL+"` again") {
			t.Fatalf("after revocation: %v %q", res.IsError, text(res))
		}
	})
}

func TestAgentHookAsksAnUnclaimedConnectionToClaim(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	m.login(s.URL, signInOwner(t, s.URL, s.w)) // no --handle: the model has to claim
	text := hookAnswer(t, "SessionStart", m.hookEvent(s.URL, "SessionStart", nil))
	if !strings.Contains(text, "no agent profile yet") || !strings.Contains(text, "claim_connected_profile") {
		t.Fatalf("SessionStart context:\n%s", text)
	}
	if log := m.hookLog(); log != "" {
		t.Errorf("hook log:\n%s", log)
	}
	// Once the model has claimed, SessionStart reports the status.
	m.agentCall(s.URL, "claim_connected_profile", map[string]any{"handle": "late-claimer", "display_name": "Late"})
	quiet(t, "SessionStart after the claim", m.hookEvent(s.URL, "SessionStart", nil))
	if repo, branch, _ := s.status(t, s.newestConnection(t)); repo != "acme/widgets" || branch != "fix/rounding" {
		t.Errorf("status: %q %q", repo, branch)
	}
}

package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
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

// login runs `osfoundry agent login --no-browser` and approves the printed
// URL headlessly, as the owner would in a browser. It returns the CLI's output.
func (m *agentMachine) login(server string, browser *ownerBrowser, extra ...string) string {
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
	callback, err := browser.approve(authURL)
	if err != nil {
		m.t.Fatal(err)
	}
	res, err := http.Get(callback.String()) // the browser follows the redirect to the CLI's loopback port
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

package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// withPath is env with dir first on PATH, as after make install.
func withPath(env []string, dir string) []string {
	out := []string{}
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PATH=") {
			out = append(out, kv)
		}
	}
	return append(out, "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"))
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
	// The entries start the command osfoundry, which make install puts on
	// PATH: .mcp.json is committed, and the path of this machine's binary
	// would not work on the next one.
	var mcpConfig struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
	}
	b, _ := os.ReadFile(filepath.Join(m.checkout, ".mcp.json"))
	json.Unmarshal(b, &mcpConfig)
	if e := mcpConfig.MCPServers["osfoundry"]; e.Command != "osfoundry" || strings.Join(e.Args, " ") != "agent mcp --server "+server {
		t.Errorf(".mcp.json entry: %+v", mcpConfig)
	}
	if !strings.Contains(stdout, "Note: osfoundry is not on PATH here") {
		t.Errorf("install did not say osfoundry is not on PATH:\n%s", stdout)
	}
	var settings struct {
		Hooks map[string][]struct {
			Hooks []struct{ Command string } `json:"hooks"`
		} `json:"hooks"`
		Permissions struct {
			Allow []string `json:"allow"`
		} `json:"permissions"`
	}
	b, _ = os.ReadFile(filepath.Join(m.checkout, ".claude", "settings.local.json"))
	json.Unmarshal(b, &settings)
	want := "osfoundry agent hook --server " + server
	for _, ev := range []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "SessionEnd"} {
		if len(settings.Hooks[ev]) != 1 || settings.Hooks[ev][0].Hooks[0].Command != want {
			t.Errorf("%s hooks: %+v", ev, settings.Hooks[ev])
		}
	}
	// The osfoundry tools run without asking, also under claude -p.
	if a := settings.Permissions.Allow; len(a) != 1 || a[0] != "mcp__osfoundry" {
		t.Errorf("permissions.allow %v", a)
	}
	// The hook command as written runs (here: not connected, so quietly).
	cmd := exec.Command("sh", "-c", want)
	cmd.Dir, cmd.Env, cmd.Stdin = m.checkout, withPath(m.env(), filepath.Dir(binary(t))), bytes.NewReader(m.fixture("SessionStart", nil))
	if out, err := cmd.Output(); err != nil || len(out) != 0 {
		t.Errorf("installed hook command: %v %q", err, out)
	}
	if out, _, _ := m.run("", "agent", "install", "claude-code", "--server", server); !strings.Contains(out, "already installed") {
		t.Errorf("second install:\n%s", out)
	}
	if ignored := exec.Command("git", "-C", m.checkout, "check-ignore", "-q", ".claude/settings.local.json"); ignored.Run() != nil {
		t.Error("settings.local.json is not ignored by git after install")
	}
	if out, _, _ := m.run("", "agent", "install", "claude-code", "--server", server, "--no-allow-rule"); !strings.Contains(out, "- permissions.allow: mcp__osfoundry") {
		t.Errorf("install --no-allow-rule:\n%s", out)
	}
	// --absolute: the path of the binary that ran install, as before.
	if out, _, _ := m.run("", "agent", "install", "claude-code", "--server", server, "--absolute"); !strings.Contains(out, "~ mcpServers.osfoundry = {\"type\":\"stdio\",\"command\":\""+binary(t)+"\"") ||
		!strings.Contains(out, "~ hooks.SessionStart: "+binary(t)+" agent hook --server "+server) {
		t.Errorf("install --absolute:\n%s", out)
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

package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const (
	userMCP = `{
  "mcpServers": {
    "github": {"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}}
  },
  "zzz": 1
}
`
	userSettings = `{
  "permissions": {"allow": ["Bash(npm test)"]},
  "hooks": {
    "PostToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "npx prettier --write"}]}],
    "SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]
  },
  "enabledMcpjsonServers": ["github"]
}
`
)

// checkout is a folder (not a git work tree) holding files.
func checkout(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func read(t *testing.T, dir, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func runInstall(t *testing.T, o installOptions) string {
	t.Helper()
	var out bytes.Buffer
	if err := install(context.Background(), &out, o); err != nil {
		t.Fatal(err)
	}
	return out.String()
}

func options(dir string) installOptions {
	return installOptions{Checkout: dir, Server: "https://foundry.example.com", Command: "/opt/my tools/osfoundry"}
}

const wantHook = "'/opt/my tools/osfoundry' agent hook --server https://foundry.example.com"

func TestInstallMergesWithOtherServersAndHooks(t *testing.T) {
	dir := checkout(t, map[string]string{mcpConfigFile: userMCP, settingsFile: userSettings})
	out := runInstall(t, options(dir))
	for _, want := range []string{
		".mcp.json\n    + mcpServers.osfoundry = {\"type\":\"stdio\",\"command\":\"/opt/my tools/osfoundry\",\"args\":[\"agent\",\"mcp\",\"--server\",\"https://foundry.example.com\"]}",
		".claude/settings.local.json\n    + hooks.SessionStart: " + wantHook,
		"+ hooks.UserPromptSubmit: ", "+ hooks.PostToolUse: ", "+ hooks.Stop: ", "+ hooks.SessionEnd: ", "+ enabledMcpjsonServers: osfoundry",
		"+ permissions.allow: mcp__osfoundry",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}

	mcp := read(t, dir, mcpConfigFile)
	var m struct {
		MCPServers map[string]json.RawMessage `json:"mcpServers"`
	}
	json.Unmarshal([]byte(mcp), &m)
	if !sameJSON(m.MCPServers["github"], []byte(`{"type": "http", "url": "https://api.githubcopilot.com/mcp/", "headers": {"Authorization": "Bearer ${GITHUB_PAT}"}}`)) {
		t.Errorf("the other server changed:\n%s", mcp)
	}
	if i, j, k := strings.Index(mcp, `"github"`), strings.Index(mcp, `"osfoundry"`), strings.Index(mcp, `"zzz"`); !(i < j && j < k) {
		t.Errorf("keys out of order:\n%s", mcp)
	}

	settings := read(t, dir, settingsFile)
	var s struct {
		Permissions json.RawMessage        `json:"permissions"`
		Hooks       map[string][]hookGroup `json:"hooks"`
		Enabled     []string               `json:"enabledMcpjsonServers"`
	}
	if err := json.Unmarshal([]byte(settings), &s); err != nil {
		t.Fatal(err)
	}
	if !sameJSON(s.Permissions, []byte(`{"allow": ["Bash(npm test)", "mcp__osfoundry"]}`)) {
		t.Errorf("permissions: %s, want the user's rule and mcp__osfoundry", s.Permissions)
	}
	ours := hookHandler{Type: "command", Command: wantHook, Timeout: hookTimeoutSecs}
	wantHooks := map[string][]hookGroup{
		"PostToolUse":      {{Matcher: "Edit|Write", Hooks: []hookHandler{{Type: "command", Command: "npx prettier --write"}}}, {Matcher: "*", Hooks: []hookHandler{ours}}},
		"SessionStart":     {{Hooks: []hookHandler{{Type: "command", Command: "echo hi"}}}, {Hooks: []hookHandler{ours}}},
		"UserPromptSubmit": {{Hooks: []hookHandler{ours}}},
		"Stop":             {{Hooks: []hookHandler{ours}}},
		// The prompt's hook waits the approval wait, and a margin.
		"PermissionRequest": {{Hooks: []hookHandler{{Type: "command", Command: wantHook, Timeout: defaultApprovalWait + 10}}}},
		"SessionEnd":        {{Hooks: []hookHandler{ours}}},
	}
	got, _ := json.Marshal(s.Hooks)
	want, _ := json.Marshal(wantHooks)
	if !sameJSON(got, want) {
		t.Errorf("hooks:\n got %s\nwant %s", got, want)
	}
	if strings.Join(s.Enabled, ",") != "github,osfoundry" {
		t.Errorf("enabledMcpjsonServers %v", s.Enabled)
	}
	if i, j, k := strings.Index(settings, `"permissions"`), strings.Index(settings, `"hooks"`), strings.Index(settings, `"enabledMcpjsonServers"`); !(i < j && j < k) {
		t.Errorf("keys out of order:\n%s", settings)
	}

	// Twice changes nothing, not a byte.
	out = runInstall(t, options(dir))
	if !strings.Contains(out, "already installed") || read(t, dir, mcpConfigFile) != mcp || read(t, dir, settingsFile) != settings {
		t.Errorf("second install changed something:\n%s", out)
	}

	// Uninstall leaves the user's settings as they were.
	o := options(dir)
	o.Remove = true
	out = runInstall(t, o)
	if !strings.Contains(out, "- mcpServers.osfoundry") || !strings.Contains(out, "- hooks.SessionEnd") || !strings.Contains(out, "- enabledMcpjsonServers: osfoundry") ||
		!strings.Contains(out, "- permissions.allow: mcp__osfoundry") {
		t.Errorf("uninstall summary:\n%s", out)
	}
	if !sameJSON([]byte(read(t, dir, mcpConfigFile)), []byte(userMCP)) || !sameJSON([]byte(read(t, dir, settingsFile)), []byte(userSettings)) {
		t.Errorf("uninstall did not restore the user's files:\n%s\n%s", read(t, dir, mcpConfigFile), read(t, dir, settingsFile))
	}
	if out := runInstall(t, o); !strings.Contains(out, "already removed") {
		t.Errorf("second uninstall:\n%s", out)
	}
}

// TestInstallAllowRule: on a checkout with no settings, install writes the
// rule that lets Claude Code (also claude -p) call the osfoundry tools;
// --no-allow-rule leaves it out, and takes out one an earlier install wrote.
func TestInstallAllowRule(t *testing.T) {
	allow := func(dir string) []string {
		var s struct {
			Permissions struct {
				Allow []string `json:"allow"`
			} `json:"permissions"`
		}
		json.Unmarshal([]byte(read(t, dir, settingsFile)), &s)
		return s.Permissions.Allow
	}
	dir := checkout(t, nil)
	runInstall(t, options(dir))
	if got := allow(dir); len(got) != 1 || got[0] != "mcp__osfoundry" {
		t.Fatalf("permissions.allow %v", got)
	}
	o := options(dir)
	o.NoAllowRule = true
	if out := runInstall(t, o); !strings.Contains(out, "- permissions.allow: mcp__osfoundry") {
		t.Errorf("summary:\n%s", out)
	}
	if got := allow(dir); len(got) != 0 || strings.Contains(read(t, dir, settingsFile), "permissions") {
		t.Fatalf("--no-allow-rule left %v:\n%s", got, read(t, dir, settingsFile))
	}
	if out := runInstall(t, o); !strings.Contains(out, "already installed") {
		t.Errorf("--no-allow-rule twice:\n%s", out)
	}
	fresh := checkout(t, nil)
	runInstall(t, o)
	runInstall(t, func() installOptions { f := options(fresh); f.NoAllowRule = true; return f }())
	if strings.Contains(read(t, fresh, settingsFile), "permissions") {
		t.Fatal("--no-allow-rule wrote a permission rule")
	}
}

func TestInstallDryRunWritesNothing(t *testing.T) {
	dir := checkout(t, map[string]string{settingsFile: userSettings})
	o := options(dir)
	o.DryRun = true
	out := runInstall(t, o)
	if !strings.Contains(out, ".mcp.json (new file)") || !strings.Contains(out, "+ hooks.UserPromptSubmit") || !strings.Contains(out, "Dry run: nothing was written.") {
		t.Errorf("dry run summary:\n%s", out)
	}
	if _, err := os.Stat(filepath.Join(dir, mcpConfigFile)); !os.IsNotExist(err) {
		t.Errorf("dry run created .mcp.json")
	}
	if read(t, dir, settingsFile) != userSettings {
		t.Error("dry run changed the settings")
	}
}

func TestInstallUpdatesAnOlderHookInPlace(t *testing.T) {
	old := `{"hooks": {"SessionStart": [{"hooks": [
    {"type": "command", "command": "echo hi"},
    {"type": "command", "command": "osfoundry agent hook --server http://old.example.com", "timeout": 5},
    {"type": "command", "command": "/usr/local/bin/osfoundry agent hook --server http://old.example.com"}
  ]}]}}`
	dir := checkout(t, map[string]string{settingsFile: old})
	out := runInstall(t, options(dir))
	if !strings.Contains(out, "~ hooks.SessionStart: "+wantHook) || !strings.Contains(out, "- hooks.SessionStart: /usr/local/bin/osfoundry agent hook") {
		t.Errorf("summary:\n%s", out)
	}
	var s struct {
		Hooks map[string][]hookGroup `json:"hooks"`
	}
	json.Unmarshal([]byte(read(t, dir, settingsFile)), &s)
	g := s.Hooks["SessionStart"]
	if len(g) != 1 || len(g[0].Hooks) != 2 || g[0].Hooks[0].Command != "echo hi" || g[0].Hooks[1].Command != wantHook {
		t.Errorf("SessionStart: %+v", g)
	}
}

func TestInstallRefusesBrokenSettings(t *testing.T) {
	dir := checkout(t, map[string]string{mcpConfigFile: `{"mcpServers": {`})
	var out bytes.Buffer
	err := install(context.Background(), &out, options(dir))
	if err == nil || !strings.Contains(err.Error(), "is not valid JSON") {
		t.Fatalf("err %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(settingsFile))); !os.IsNotExist(err) {
		t.Error("wrote settings despite the broken .mcp.json")
	}
}

func TestInstallRespectsARejectedServer(t *testing.T) {
	dir := checkout(t, map[string]string{settingsFile: `{"disabledMcpjsonServers": ["osfoundry"]}`})
	out := runInstall(t, options(dir))
	if !strings.Contains(out, "Note: osfoundry is in disabledMcpjsonServers") || strings.Contains(out, "enabledMcpjsonServers: osfoundry") {
		t.Errorf("summary:\n%s", out)
	}
}

func TestIsOurHook(t *testing.T) {
	for cmd, want := range map[string]bool{
		"osfoundry agent hook --server https://x":                 true,
		"/usr/local/bin/osfoundry agent hook --server https://x":  true,
		"'/opt/my tools/osfoundry' agent hook --server https://x": true,
		"osfoundry agent mcp --server https://x":                  false,
		"echo osfoundry agent":                                    false,
		"npx prettier --write":                                    false,
		"myhook agent hook":                                       false,
	} {
		if got := isOurHook(cmd); got != want {
			t.Errorf("isOurHook(%q) = %v", cmd, got)
		}
	}
}

const userCodexConfig = `# team settings
model = "o3"

[mcp_servers.github]
command = "gh-mcp"
args = [
  "--read-only",
]

[mcp_servers.osfoundry]
command = "osfoundry"
args = ["agent", "mcp", "--server", "https://old.example.com"]
startup_timeout_sec = 20 # slow machines

[mcp_servers.osfoundry.tools.ask_owner]
approval_mode = "prompt"

[profiles.fast]
model = "o4-mini"
`

const userCodexHooks = `{
  "hooks": {
    "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
  }
}
`

func codexOptions(dir string) installOptions {
	o := options(dir)
	o.Client = clientCodex
	return o
}

func TestInstallCodexMergesWithWhatIsThere(t *testing.T) {
	dir := checkout(t, map[string]string{codexConfigFile: userCodexConfig, codexHooksFile: userCodexHooks})
	dry := codexOptions(dir)
	dry.DryRun = true
	if out := runInstall(t, dry); !strings.Contains(out, "Dry run: nothing was written.") || read(t, dir, codexConfigFile) != userCodexConfig || read(t, dir, codexHooksFile) != userCodexHooks {
		t.Fatalf("dry run:\n%s", out)
	}
	out := runInstall(t, codexOptions(dir))
	for _, want := range []string{
		".codex/config.toml\n    ~ mcp_servers.osfoundry.command = \"/opt/my tools/osfoundry\"",
		"~ mcp_servers.osfoundry.args = [\"agent\", \"mcp\", \"--server\", \"https://foundry.example.com\"]\n        (was [\"agent\",\"mcp\",\"--server\",\"https://old.example.com\"])",
		"+ mcp_servers.osfoundry.env_vars = [\"XDG_CONFIG_HOME\", \"XDG_STATE_HOME\"]",
		"+ mcp_servers.osfoundry.default_tools_approval_mode = \"approve\"",
		".codex/hooks.json\n    + hooks.SessionStart: " + wantHook + " --client codex",
		"+ hooks.UserPromptSubmit: ", "+ hooks.PostToolUse: ", "+ hooks.Stop: ", "+ hooks.PermissionRequest: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("summary lacks %q:\n%s", want, out)
		}
	}
	// Every line of the user's file is still there, the comments among them.
	got := read(t, dir, codexConfigFile)
	for _, line := range strings.Split(userCodexConfig, "\n") {
		if strings.Contains(line, "old.example.com") || strings.HasPrefix(line, "command = \"osfoundry\"") {
			continue
		}
		if !strings.Contains(got, line) {
			t.Errorf("config.toml lost %q:\n%s", line, got)
		}
	}
	var doc struct {
		MCPServers map[string]map[string]any `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(got, &doc); err != nil {
		t.Fatalf("config.toml is no longer TOML: %v\n%s", err, got)
	}
	ours := doc.MCPServers["osfoundry"]
	if ours["command"] != "/opt/my tools/osfoundry" || ours["startup_timeout_sec"] != int64(20) || ours["default_tools_approval_mode"] != "approve" || ours["tools"] == nil {
		t.Errorf("mcp_servers.osfoundry: %v", ours)
	}
	if doc.MCPServers["github"]["command"] != "gh-mcp" {
		t.Errorf("mcp_servers.github: %v", doc.MCPServers["github"])
	}
	var hooks map[string]map[string][]hookGroup
	json.Unmarshal([]byte(read(t, dir, codexHooksFile)), &hooks)
	if stop := hooks["hooks"]["Stop"]; len(stop) != 2 || stop[0].Hooks[0].Command != "notify-send done" || stop[1].Hooks[0].Command != wantHook+" --client codex" {
		t.Errorf("Stop hooks: %+v", stop)
	}

	if out := runInstall(t, codexOptions(dir)); !strings.Contains(out, "Codex integration already installed") {
		t.Errorf("second install:\n%s", out)
	}
	noRule := codexOptions(dir)
	noRule.NoAllowRule = true
	if out := runInstall(t, noRule); !strings.Contains(out, "- mcp_servers.osfoundry.default_tools_approval_mode") {
		t.Errorf("install --no-allow-rule:\n%s", out)
	}

	remove := codexOptions(dir)
	remove.Remove = true
	runInstall(t, remove)
	got = read(t, dir, codexConfigFile)
	if strings.Contains(got, "[mcp_servers.osfoundry]") || !strings.Contains(got, "[mcp_servers.osfoundry.tools.ask_owner]") || !strings.Contains(got, "[profiles.fast]") {
		t.Errorf("after uninstall:\n%s", got)
	}
	if h := read(t, dir, codexHooksFile); strings.Contains(h, "agent hook") || !strings.Contains(h, "notify-send done") {
		t.Errorf("hooks.json after uninstall:\n%s", h)
	}
}

func TestInstallCodexIntoNothing(t *testing.T) {
	dir := checkout(t, nil)
	runInstall(t, codexOptions(dir))
	want := "[mcp_servers.osfoundry]\ncommand = \"/opt/my tools/osfoundry\"\nargs = [\"agent\", \"mcp\", \"--server\", \"https://foundry.example.com\"]\n" +
		"env_vars = [\"XDG_CONFIG_HOME\", \"XDG_STATE_HOME\"]\ndefault_tools_approval_mode = \"approve\"\n"
	if got := read(t, dir, codexConfigFile); got != want {
		t.Errorf("config.toml:\n%s", got)
	}
	remove := codexOptions(dir)
	remove.Remove = true
	runInstall(t, remove)
	for _, f := range []string{codexConfigFile, codexHooksFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("%s left after uninstall: %v", f, err)
		}
	}
}

func TestInstallCodexRefusesWhatItCannotEdit(t *testing.T) {
	for name, body := range map[string]string{
		"not TOML":        "[mcp_servers\n",
		"an inline table": "mcp_servers = { osfoundry = { command = \"osfoundry\", args = [\"agent\", \"mcp\"] } }\n",
	} {
		t.Run(name, func(t *testing.T) {
			dir := checkout(t, map[string]string{codexConfigFile: body})
			err := install(context.Background(), &bytes.Buffer{}, codexOptions(dir))
			if err == nil || !strings.Contains(err.Error(), "nothing was changed") || read(t, dir, codexConfigFile) != body {
				t.Fatalf("want a refusal that changes nothing, got %v", err)
			}
		})
	}
	t.Run("a server of the same name configured by hand", func(t *testing.T) {
		body := "[mcp_servers.osfoundry]\nurl = \"https://foundry.example.com/mcp\"\n"
		dir := checkout(t, map[string]string{codexConfigFile: body})
		if out := runInstall(t, codexOptions(dir)); !strings.Contains(out, "already has an mcp_servers.osfoundry of its own") || read(t, dir, codexConfigFile) != body {
			t.Fatalf("a hand-made entry was touched:\n%s", out)
		}
	})
}

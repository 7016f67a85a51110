package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"

	"github.com/BurntSushi/toml"
)

// The files install writes for Codex in the checkout (read in a trusted project).
const (
	codexConfigFile = ".codex/config.toml"
	codexHooksFile  = ".codex/hooks.json"
)

// codexHookEvents: Codex has no SessionEnd.
var codexHookEvents = []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "Stop", "PermissionRequest"}

// codexEnvVars are passed on beside Codex's short default list (HOME, PATH…):
// where login keeps the credentials and state, when the user moved them.
var codexEnvVars = []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME"}

// codexApproval lets `codex exec` call the open-world tools without asking.
const codexApproval = "approve"

const codexServerHeader = "[mcp_servers." + mcpServerName + "]"

// codexEntry is the bridge's table, key by key in the order written.
func (o installOptions) codexEntry() [][2]any {
	e := o.bridgeEntry()
	kv := [][2]any{{"command", e.Command}, {"args", e.Args}, {"env_vars", codexEnvVars}}
	if !o.NoAllowRule {
		kv = append(kv, [2]any{"default_tools_approval_mode", codexApproval})
	}
	return kv
}

var codexOwnKeys = []string{"command", "args", "env_vars", "default_tools_approval_mode"}

// editCodexConfig edits .codex/config.toml as text, so its comments, layout
// and the keys install does not own stay.
func editCodexConfig(o installOptions) (*fileEdit, error) {
	e := &fileEdit{rel: codexConfigFile, path: filepath.Join(o.Checkout, filepath.FromSlash(codexConfigFile)), mode: 0o644}
	before, err := os.ReadFile(e.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		e.create = true
	case err != nil:
		return nil, err
	default:
		if fi, err := os.Stat(e.path); err == nil {
			e.mode = fi.Mode().Perm()
		}
	}
	var doc struct {
		MCPServers map[string]map[string]any `toml:"mcp_servers"`
	}
	if _, err := toml.Decode(string(before), &doc); err != nil {
		return nil, fmt.Errorf("%s is not valid TOML (%v): fix it first; nothing was changed", e.path, err)
	}
	cur, exists := doc.MCPServers[mcpServerName]
	lines := strings.SplitAfter(string(before), "\n")
	start, end := codexTable(lines)
	if exists && start < 0 {
		return nil, fmt.Errorf("%s defines mcp_servers.%s other than as a %s table: edit it by hand; nothing was changed", e.path, mcpServerName, codexServerHeader)
	}
	if exists && !isOurCodexServer(cur) {
		if !o.Remove {
			e.notes = append(e.notes, fmt.Sprintf("Note: %s already has an mcp_servers.%s of its own; it was left as it is.", codexConfigFile, mcpServerName))
		}
		return e, nil
	}
	want := o.codexEntry()
	switch {
	case o.Remove && exists:
		if start > 0 && strings.TrimSpace(lines[start-1]) == "" {
			start-- // the blank line install put before the table
		}
		lines = slices.Delete(lines, start, end)
		e.lines = append(e.lines, "- "+codexServerHeader)
	case o.Remove:
	case !exists:
		if n := len(lines); n > 0 && lines[n-1] != "" && !strings.HasSuffix(lines[n-1], "\n") {
			lines[n-1] += "\n"
		}
		if len(strings.TrimSpace(string(before))) > 0 {
			lines = append(lines, "\n")
		}
		lines = append(lines, codexServerHeader+"\n")
		for _, kv := range want {
			lines = append(lines, tomlLine(kv[0].(string), kv[1]))
			e.lines = append(e.lines, "+ mcp_servers."+mcpServerName+"."+strings.TrimSpace(tomlLine(kv[0].(string), kv[1])))
		}
	default:
		body := slices.Clone(lines[start+1 : end])
		for _, k := range codexOwnKeys {
			i := slices.IndexFunc(want, func(kv [2]any) bool { return kv[0] == k })
			from, to := tomlKey(body, k)
			switch {
			case i < 0 && from >= 0:
				body = slices.Delete(body, from, to)
				e.lines = append(e.lines, "- mcp_servers."+mcpServerName+"."+k)
			case i < 0:
			case from < 0:
				body = slices.Insert(body, tomlInsertAt(body), tomlLine(k, want[i][1]))
				e.lines = append(e.lines, "+ mcp_servers."+mcpServerName+"."+strings.TrimSpace(tomlLine(k, want[i][1])))
			case !sameTOML(cur[k], want[i][1]):
				line := tomlLine(k, want[i][1])
				body = slices.Replace(body, from, to, line)
				e.lines = append(e.lines, "~ mcp_servers."+mcpServerName+"."+strings.TrimSpace(line), "    (was "+compactJSON(cur[k])+")")
			}
		}
		lines = slices.Concat(lines[:start+1], body, lines[end:])
	}
	if len(e.lines) == 0 {
		return e, nil
	}
	after := strings.Join(lines, "")
	if strings.TrimSpace(after) != "" {
		e.after = []byte(after)
	} else if e.create {
		e.lines = nil // nothing to remove from a file that is not there
	}
	return e, nil
}

// editCodexHooks edits .codex/hooks.json, shaped like Claude Code's hooks.
func editCodexHooks(o installOptions) (*fileEdit, error) {
	e := &fileEdit{rel: codexHooksFile, path: filepath.Join(o.Checkout, filepath.FromSlash(codexHooksFile))}
	root, mode, missing, err := readSettings(e.path)
	if err != nil {
		return nil, err
	}
	e.mode, e.create = mode, missing
	if e.lines, err = mergeHooks(root, codexHookEvents, o); err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	if len(e.lines) > 0 && root.len() > 0 {
		e.after = indentJSON(root)
	}
	return e, nil
}

func isOurCodexServer(v map[string]any) bool {
	b, _ := json.Marshal(map[string]any{"command": v["command"], "args": v["args"]})
	return isOurServer(b)
}

// codexHeader matches the table's header, however its keys are quoted.
var codexHeader = regexp.MustCompile(`^\s*\[\s*(mcp_servers|"mcp_servers")\s*\.\s*(` + mcpServerName + `|"` + mcpServerName + `")\s*\]\s*(#.*)?$`)

// codexTable returns the table's header index and its body's end, or -1.
func codexTable(lines []string) (start, end int) {
	start = slices.IndexFunc(lines, func(l string) bool { return codexHeader.MatchString(strings.TrimRight(l, "\r\n")) })
	if start < 0 {
		return -1, -1
	}
	for end = start + 1; end < len(lines); end++ {
		if strings.HasPrefix(strings.TrimSpace(lines[end]), "[") && !inArray(lines[start+1:end]) {
			break
		}
	}
	// Blank lines and comments before the next table belong to it.
	for end > start+1 && (strings.TrimSpace(lines[end-1]) == "" || strings.HasPrefix(strings.TrimSpace(lines[end-1]), "#")) {
		end--
	}
	return start, end
}

// inArray reports whether lines leave a multi-line array open, so a "[" line
// after them is an element, not a table header.
func inArray(lines []string) bool {
	depth := 0
	for _, l := range lines {
		if k, v, ok := strings.Cut(l, "="); ok && !strings.HasPrefix(strings.TrimSpace(k), "#") {
			l = v
		}
		depth += strings.Count(l, "[") - strings.Count(l, "]")
	}
	return depth > 0
}

// tomlKey finds the lines [from, to) that set key, or -1.
func tomlKey(body []string, key string) (from, to int) {
	re := regexp.MustCompile(`^\s*("?)` + regexp.QuoteMeta(key) + `("?)\s*=`)
	from = slices.IndexFunc(body, func(l string) bool { return re.MatchString(l) })
	if from < 0 {
		return -1, -1
	}
	to = from + 1
	for to < len(body) && inArray(body[from:to]) {
		to++
	}
	return from, to
}

func tomlInsertAt(body []string) int {
	i := len(body)
	for i > 0 && strings.TrimSpace(body[i-1]) == "" {
		i--
	}
	return i
}

func tomlLine(key string, v any) string {
	var b bytes.Buffer
	if err := toml.NewEncoder(&b).Encode(map[string]any{key: v}); err != nil {
		panic(err) // only values built by install are written
	}
	return strings.TrimSpace(b.String()) + "\n"
}

func sameTOML(decoded, want any) bool {
	a, _ := json.Marshal(decoded)
	b, _ := json.Marshal(want)
	var x, y any
	json.Unmarshal(a, &x)
	json.Unmarshal(b, &y)
	return reflect.DeepEqual(x, y)
}

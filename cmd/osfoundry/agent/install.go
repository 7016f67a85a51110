package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The names install writes into Claude Code's settings of a checkout.
const (
	mcpServerName    = "osfoundry"
	mcpConfigFile    = ".mcp.json"
	settingsFile     = ".claude/settings.local.json"
	hookTimeoutSecs  = 5 // above the hook's own 2 s limit; raises SessionEnd's 1.5 s default budget
	excludedSettings = "/" + settingsFile
)

// hookEvents are the events the hook handles, in the order they happen.
var hookEvents = []string{"SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"}

// installOptions configures install.
type installOptions struct {
	Checkout string
	Server   string
	// Command starts osfoundry: "osfoundry" when that is on PATH, else the
	// absolute path of the running binary.
	Command string
	DryRun  bool
	// Remove undoes an install instead.
	Remove bool
}

// mcpEntry is the project MCP server Claude Code starts: the stdio bridge.
type mcpEntry struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// hookHandler is one command hook.
type hookHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// hookGroup is a matcher group holding handlers.
type hookGroup struct {
	Matcher string        `json:"matcher,omitempty"`
	Hooks   []hookHandler `json:"hooks"`
}

// fileEdit is the change install makes to one file.
type fileEdit struct {
	rel    string // for the summary, relative to the checkout
	path   string
	after  []byte // nil: delete the file
	mode   fs.FileMode
	create bool
	lines  []string // the changes, diff-like
	notes  []string // what the user should know, changed or not
}

// install writes the MCP server entry into the checkout's .mcp.json and the
// hooks into .claude/settings.local.json, merging with what is there: other
// servers, other hooks and every other setting stay as they were, in their
// order. Running it again changes nothing. With Remove it takes out exactly
// what it put in.
func install(ctx context.Context, out io.Writer, o installOptions) error {
	var edits, notes []*fileEdit
	for _, f := range []func(installOptions) (*fileEdit, error){editMCPConfig, editSettings} {
		e, err := f(o)
		if err != nil {
			return err
		}
		if len(e.lines) > 0 {
			edits = append(edits, e)
		}
		notes = append(notes, e)
	}
	if !o.Remove {
		if e := editExclude(ctx, o.Checkout); e != nil && len(edits) > 0 {
			edits = append(edits, e)
		}
	}
	defer func() {
		for _, e := range notes {
			for _, n := range e.notes {
				fmt.Fprintln(out, n)
			}
		}
	}()
	verb := "installed"
	if o.Remove {
		verb = "removed"
	}
	if len(edits) == 0 {
		fmt.Fprintf(out, "Claude Code integration already %s in %s: nothing changed.\n", verb, o.Checkout)
		return nil
	}
	fmt.Fprintf(out, "Claude Code integration for %s (server %s):\n", o.Checkout, o.Server)
	for _, e := range edits {
		switch {
		case e.after == nil:
			fmt.Fprintf(out, "  %s (deleted: nothing else was in it)\n", e.rel)
		case e.create:
			fmt.Fprintf(out, "  %s (new file)\n", e.rel)
		default:
			fmt.Fprintf(out, "  %s\n", e.rel)
		}
		for _, l := range e.lines {
			fmt.Fprintf(out, "    %s\n", l)
		}
	}
	if o.DryRun {
		fmt.Fprintln(out, "Dry run: nothing was written.")
		return nil
	}
	for _, e := range edits {
		if err := e.apply(); err != nil {
			return err
		}
	}
	if o.Remove {
		fmt.Fprintln(out, "Done. Restart Claude Code in this checkout to drop the server and hooks.")
	} else {
		fmt.Fprintln(out, "Done. Start (or restart) Claude Code in this checkout; approve the osfoundry server if it asks.")
	}
	return nil
}

func (e *fileEdit) apply() error {
	if e.after == nil {
		if err := os.Remove(e.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(e.path), 0o755); err != nil {
		return err
	}
	return writeFileAtomic(e.path, e.after, e.mode)
}

// readSettings reads a JSON settings file; a missing file is an empty object.
func readSettings(path string) (*object, fs.FileMode, bool, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return newObject(), 0o644, true, nil
	}
	if err != nil {
		return nil, 0, false, err
	}
	mode := fs.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		mode = fi.Mode().Perm()
	}
	o, err := parseObject(b)
	if err != nil {
		return nil, 0, false, fmt.Errorf("%s is not valid JSON (%v): fix it first; nothing was changed", path, err)
	}
	return o, mode, false, nil
}

func indentJSON(o *object) []byte {
	b, err := json.MarshalIndent(o, "", "  ")
	if err != nil {
		panic(err)
	}
	return append(b, '\n')
}

func (o installOptions) bridgeEntry() mcpEntry {
	return mcpEntry{Type: "stdio", Command: o.Command, Args: []string{"agent", "mcp", "--server", o.Server}}
}

func (o installOptions) hook() hookHandler {
	return hookHandler{Type: "command", Command: shellJoin(o.Command, "agent", "hook", "--server", o.Server), Timeout: hookTimeoutSecs}
}

// editMCPConfig adds (or removes) the osfoundry server of .mcp.json.
func editMCPConfig(o installOptions) (*fileEdit, error) {
	e := &fileEdit{rel: mcpConfigFile, path: filepath.Join(o.Checkout, mcpConfigFile)}
	root, mode, missing, err := readSettings(e.path)
	if err != nil {
		return nil, err
	}
	e.mode, e.create = mode, missing
	servers, err := root.child("mcpServers")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	cur, exists := servers.vals[mcpServerName]
	want, _ := json.Marshal(o.bridgeEntry())
	switch {
	case o.Remove && exists && isOurServer(cur):
		servers.del(mcpServerName)
		e.lines = append(e.lines, "- mcpServers."+mcpServerName)
	case o.Remove:
	case !exists:
		servers.set(mcpServerName, o.bridgeEntry())
		e.lines = append(e.lines, "+ mcpServers."+mcpServerName+" = "+string(want))
	case !sameJSON(cur, want):
		servers.set(mcpServerName, o.bridgeEntry())
		e.lines = append(e.lines, "~ mcpServers."+mcpServerName+" = "+string(want), "    (was "+compactJSON(cur)+")")
	}
	if len(e.lines) == 0 {
		return e, nil
	}
	if servers.len() == 0 {
		root.del("mcpServers")
	} else {
		root.set("mcpServers", servers)
	}
	if root.len() > 0 {
		e.after = indentJSON(root)
	}
	return e, nil
}

// isOurServer tells the bridge entry install writes from a server of the
// same name configured by hand.
func isOurServer(raw json.RawMessage) bool {
	var s mcpEntry
	return json.Unmarshal(raw, &s) == nil && slices.Contains(s.Args, "mcp") && slices.Contains(s.Args, "agent") &&
		strings.HasPrefix(filepath.Base(s.Command), "osfoundry")
}

// isOurHook tells the hook install writes (any path, any server) from the
// other hooks of a settings file.
func isOurHook(command string) bool {
	f := strings.Fields(command)
	for i := 1; i+1 < len(f); i++ {
		if f[i] == "agent" && f[i+1] == "hook" && strings.HasPrefix(filepath.Base(strings.Trim(f[i-1], `'"`)), "osfoundry") {
			return true
		}
	}
	return false
}

// editSettings adds (or removes) the hooks and the approval of the MCP
// server in .claude/settings.local.json.
func editSettings(o installOptions) (*fileEdit, error) {
	e := &fileEdit{rel: settingsFile, path: filepath.Join(o.Checkout, filepath.FromSlash(settingsFile))}
	root, mode, missing, err := readSettings(e.path)
	if err != nil {
		return nil, err
	}
	e.mode, e.create = mode, missing
	hooks, err := root.child("hooks")
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	want := o.hook()
	wantJSON, _ := json.Marshal(want)
	hooksChanged := false
	for _, ev := range hookEvents {
		groups, err := hooks.array(ev)
		if err != nil {
			return nil, fmt.Errorf("%s: hooks: %w", e.path, err)
		}
		kept, lines, found := mergeHookGroups(groups, ev, wantJSON, o.Remove)
		if !o.Remove && !found {
			g := hookGroup{Hooks: []hookHandler{want}}
			if ev == "PostToolUse" {
				g.Matcher = "*"
			}
			b, _ := json.Marshal(g)
			kept = append(kept, b)
			lines = append(lines, "+ hooks."+ev+": "+want.Command)
		}
		if len(lines) == 0 {
			continue
		}
		hooksChanged = true
		e.lines = append(e.lines, lines...)
		if len(kept) == 0 {
			hooks.del(ev)
		} else {
			hooks.set(ev, kept)
		}
	}
	if hooksChanged {
		if hooks.len() == 0 {
			root.del("hooks")
		} else {
			root.set("hooks", hooks)
		}
	}
	line, note, err := editApproval(root, o.Remove)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	if line != "" {
		e.lines = append(e.lines, line)
	}
	if note != "" {
		e.notes = append(e.notes, note)
	}
	if len(e.lines) > 0 && root.len() > 0 {
		e.after = indentJSON(root)
	}
	return e, nil
}

// mergeHookGroups finds the hook among an event's matcher groups. It keeps
// one copy (brought up to date), drops duplicates, or with remove drops it,
// along with a group it leaves empty. found says whether a copy was kept.
func mergeHookGroups(groups []json.RawMessage, ev string, want []byte, remove bool) (kept []json.RawMessage, lines []string, found bool) {
	for _, g := range groups {
		obj, err := parseObject(g)
		if err != nil {
			kept = append(kept, g)
			continue
		}
		handlers, err := obj.array("hooks")
		if err != nil {
			kept = append(kept, g)
			continue
		}
		touched := false
		var hs []json.RawMessage
		for _, h := range handlers {
			var hv hookHandler
			if json.Unmarshal(h, &hv) != nil || hv.Type != "command" || !isOurHook(hv.Command) {
				hs = append(hs, h)
				continue
			}
			switch {
			case remove || found:
				touched = true
				lines = append(lines, "- hooks."+ev+": "+hv.Command)
				continue
			case sameJSON(h, want):
			default:
				var w hookHandler
				json.Unmarshal(want, &w)
				lines = append(lines, "~ hooks."+ev+": "+w.Command, "    (was "+compactJSON(h)+")")
				h, touched = want, true
			}
			found = true
			hs = append(hs, h)
		}
		if touched {
			if len(hs) == 0 {
				continue // the group held only this hook
			}
			obj.set("hooks", hs)
			g, _ = json.Marshal(obj)
		}
		kept = append(kept, g)
	}
	return kept, lines, found
}

// editApproval approves the project server (enabledMcpjsonServers), so
// Claude Code connects it once the folder is trusted, without a prompt. It
// returns the change made, or a note when the user rejected the server.
func editApproval(root *object, remove bool) (line, note string, err error) {
	var enabled, disabled []string
	if v, ok := root.vals["enabledMcpjsonServers"]; ok && json.Unmarshal(v, &enabled) != nil {
		return "", "", errors.New("enabledMcpjsonServers is not a list of names")
	}
	if v, ok := root.vals["disabledMcpjsonServers"]; ok {
		json.Unmarshal(v, &disabled)
	}
	has := slices.Contains(enabled, mcpServerName)
	switch {
	case remove && has:
		enabled = slices.DeleteFunc(enabled, func(s string) bool { return s == mcpServerName })
		if len(enabled) == 0 {
			root.del("enabledMcpjsonServers")
		} else {
			root.set("enabledMcpjsonServers", enabled)
		}
		return "- enabledMcpjsonServers: " + mcpServerName, "", nil
	case remove || has:
		return "", "", nil
	case slices.Contains(disabled, mcpServerName):
		return "", "Note: " + mcpServerName + " is in disabledMcpjsonServers of " + settingsFile +
			" (rejected earlier); take it out there to use the server.", nil
	}
	root.set("enabledMcpjsonServers", append(enabled, mcpServerName))
	return "+ enabledMcpjsonServers: " + mcpServerName, "", nil
}

// editExclude keeps the personal settings file out of git in a checkout
// that does not ignore it yet (.git/info/exclude, never committed).
func editExclude(ctx context.Context, checkout string) *fileEdit {
	if top, _ := gitTopAndBranch(ctx, checkout, false); top == "" {
		return nil
	}
	cmd := exec.CommandContext(ctx, "git", "-C", checkout, "check-ignore", "-q", settingsFile)
	if err := cmd.Run(); err == nil || cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
		return nil // ignored already, or git cannot tell
	}
	p, err := git(ctx, checkout, "rev-parse", "--git-path", "info/exclude")
	if err != nil || p == "" {
		return nil
	}
	if !filepath.IsAbs(p) {
		p = filepath.Join(checkout, p)
	}
	before, err := os.ReadFile(p)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	after := bytes.Clone(before)
	if len(after) > 0 && after[len(after)-1] != '\n' {
		after = append(after, '\n')
	}
	after = append(after, excludedSettings+"\n"...)
	rel, err := filepath.Rel(checkout, p)
	if err != nil || strings.HasPrefix(rel, "..") {
		rel = p
	}
	return &fileEdit{rel: rel, path: p, after: after, mode: 0o644, create: before == nil,
		lines: []string{"+ " + excludedSettings + " (personal settings stay out of git)"}}
}

// selfCommand is how Claude Code should start this binary: "osfoundry" when
// that name on PATH is this very file, else its absolute path.
func selfCommand() string {
	exe, err := os.Executable()
	if err != nil {
		return "osfoundry"
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	if p, err := exec.LookPath("osfoundry"); err == nil {
		a, err1 := os.Stat(p)
		b, err2 := os.Stat(exe)
		if err1 == nil && err2 == nil && os.SameFile(a, b) {
			return "osfoundry"
		}
	}
	return exe
}

// shellJoin quotes words for sh where needed.
func shellJoin(words ...string) string {
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = shellQuote(w)
	}
	return strings.Join(out, " ")
}

func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./:@%+=,", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

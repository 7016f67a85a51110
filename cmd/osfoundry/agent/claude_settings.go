package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
)

// The edits install makes to Claude Code's .mcp.json and .claude/settings.local.json.

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

// isOurServer tells the entry install writes from one of the same name
// configured by hand.
func isOurServer(raw json.RawMessage) bool {
	var s mcpEntry
	return json.Unmarshal(raw, &s) == nil && slices.Contains(s.Args, "mcp") && slices.Contains(s.Args, "agent") &&
		strings.HasPrefix(filepath.Base(s.Command), "osfoundry")
}

func isOurHook(command string) bool {
	f := strings.Fields(command)
	for i := 1; i+1 < len(f); i++ {
		if f[i] == "agent" && f[i+1] == "hook" && strings.HasPrefix(filepath.Base(strings.Trim(f[i-1], `'"`)), "osfoundry") {
			return true
		}
	}
	return false
}

func editSettings(o installOptions) (*fileEdit, error) {
	e := &fileEdit{rel: settingsFile, path: filepath.Join(o.Checkout, filepath.FromSlash(settingsFile))}
	root, mode, missing, err := readSettings(e.path)
	if err != nil {
		return nil, err
	}
	e.mode, e.create = mode, missing
	lines, err := mergeHooks(root, hookEvents, o)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	e.lines = append(e.lines, lines...)
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
	if line, err = editAllowRule(root, o.Remove || o.NoAllowRule); err != nil {
		return nil, fmt.Errorf("%s: %w", e.path, err)
	}
	if line != "" {
		e.lines = append(e.lines, line)
	}
	if len(e.lines) > 0 && root.len() > 0 {
		e.after = indentJSON(root)
	}
	return e, nil
}

// mergeHooks edits "hooks", the shape Claude Code and Codex share: event →
// matcher groups → handlers.
func mergeHooks(root *object, events []string, o installOptions) ([]string, error) {
	hooks, err := root.child("hooks")
	if err != nil {
		return nil, err
	}
	var all []string
	for _, ev := range events {
		want := o.hookFor(ev)
		wantJSON, _ := json.Marshal(want)
		groups, err := hooks.array(ev)
		if err != nil {
			return nil, fmt.Errorf("hooks: %w", err)
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
		all = append(all, lines...)
		if len(kept) == 0 {
			hooks.del(ev)
		} else {
			hooks.set(ev, kept)
		}
	}
	if len(all) > 0 {
		if hooks.len() == 0 {
			root.del("hooks")
		} else {
			root.set("hooks", hooks)
		}
	}
	return all, nil
}

// mergeHookGroups keeps one up-to-date copy of the hook among an event's
// groups (none with remove), dropping a group it leaves empty.
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

// editApproval approves the project server, so Claude Code connects it
// without a prompt; note says when the user rejected it.
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

// allowRule lets Claude Code call the server's tools without asking: a
// headless `claude -p` refuses any tool without one.
const allowRule = "mcp__" + mcpServerName

// editAllowRule keeps every other rule in its order.
func editAllowRule(root *object, remove bool) (string, error) {
	perms, err := root.child("permissions")
	if err != nil {
		return "", err
	}
	var allow []json.RawMessage
	if allow, err = perms.array("allow"); err != nil {
		return "", fmt.Errorf("permissions: %w", err)
	}
	at := slices.IndexFunc(allow, func(r json.RawMessage) bool {
		var rule string
		return json.Unmarshal(r, &rule) == nil && rule == allowRule
	})
	switch {
	case remove && at >= 0:
		allow = slices.Delete(allow, at, at+1)
	case !remove && at < 0:
		b, _ := json.Marshal(allowRule)
		allow = append(allow, b)
	default:
		return "", nil
	}
	if len(allow) == 0 {
		perms.del("allow")
	} else {
		perms.set("allow", allow)
	}
	if perms.len() == 0 {
		root.del("permissions")
	} else {
		root.set("permissions", perms)
	}
	if remove {
		return "- permissions.allow: " + allowRule, nil
	}
	return "+ permissions.allow: " + allowRule + " (its tools run without asking, also under claude -p)", nil
}

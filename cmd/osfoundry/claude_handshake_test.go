package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// messagesModel is a scripted Anthropic Messages API on loopback: the model
// behind Claude Code. It calls one osfoundry tool (after the tool search
// Claude Code defers MCP tools behind) and keeps the tool's result.
type messagesModel struct {
	*httptest.Server
	tool string // e.g. mcp__osfoundry__list_sessions

	mu      sync.Mutex
	offered []string // the tools of the last request
	result  *struct {
		Text    string
		IsError bool
	}
}

func startMessagesModel(t *testing.T, tool string) *messagesModel {
	m := &messagesModel{tool: tool}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

type messageBlock struct {
	Type      string          `json:"type"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	ToolUseID string          `json:"tool_use_id"`
	IsError   bool            `json:"is_error"`
	Content   json.RawMessage `json:"content"`
}

func (m *messagesModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !strings.HasPrefix(r.URL.Path, "/v1/messages") || strings.Contains(r.URL.Path, "count_tokens") {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"input_tokens":10}`)
		return
	}
	var req struct {
		Tools []struct {
			Name string `json:"name"`
		} `json:"tools"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	json.Unmarshal(body, &req)
	var tools []string
	for _, tl := range req.Tools {
		tools = append(tools, tl.Name)
	}
	var blocks []messageBlock
	for _, msg := range req.Messages {
		var bs []messageBlock
		if json.Unmarshal(msg.Content, &bs) == nil {
			blocks = append(blocks, bs...)
		}
	}
	used := func(name string) string {
		for _, b := range blocks {
			if b.Type == "tool_use" && b.Name == name {
				return b.ID
			}
		}
		return ""
	}
	m.mu.Lock()
	m.offered = tools
	m.mu.Unlock()
	if id := used(m.tool); id != "" {
		for _, b := range blocks {
			if b.Type == "tool_result" && b.ToolUseID == id {
				m.mu.Lock()
				m.result = &struct {
					Text    string
					IsError bool
				}{contentText(b.Content), b.IsError}
				m.mu.Unlock()
			}
		}
		writeMessage(w, map[string]any{"type": "text", "text": "Done."}, "end_turn")
		return
	}
	for _, name := range tools {
		if name == m.tool {
			writeMessage(w, map[string]any{"type": "tool_use", "id": "toolu_call", "name": m.tool, "input": map[string]any{}}, "tool_use")
			return
		}
	}
	for _, name := range tools {
		if regexp.MustCompile(`(?i)tool.?search`).MatchString(name) && used(name) == "" {
			writeMessage(w, map[string]any{"type": "tool_use", "id": "toolu_search", "name": name,
				"input": map[string]any{"query": "select:" + m.tool, "max_results": 5}}, "tool_use")
			return
		}
	}
	writeMessage(w, map[string]any{"type": "text", "text": "The tool was not offered."}, "end_turn")
}

// contentText is a tool result's text: a string, or text blocks.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct{ Text string }
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text + " ")
	}
	return b.String()
}

// writeMessage streams one assistant message of one block.
func writeMessage(w http.ResponseWriter, block map[string]any, stop string) {
	w.Header().Set("Content-Type", "text/event-stream")
	send := func(typ string, data map[string]any) {
		data["type"] = typ
		b, _ := json.Marshal(data)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, b)
	}
	send("message_start", map[string]any{"message": map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-scripted",
		"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": map[string]any{"input_tokens": 10, "output_tokens": 1}}})
	if block["type"] == "text" {
		send("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "text", "text": ""}})
		send("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "text_delta", "text": block["text"]}})
	} else {
		input, _ := json.Marshal(block["input"])
		send("content_block_start", map[string]any{"index": 0, "content_block": map[string]any{"type": "tool_use", "id": block["id"], "name": block["name"], "input": map[string]any{}}})
		send("content_block_delta", map[string]any{"index": 0, "delta": map[string]any{"type": "input_json_delta", "partial_json": string(input)}})
	}
	send("content_block_stop", map[string]any{"index": 0})
	send("message_delta", map[string]any{"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
	send("message_stop", map[string]any{})
}

// claudeRun is what one `claude -p` run with the bridge showed.
type claudeRun struct {
	result   string // the tool result the model read
	isError  bool
	debug    string // Claude Code's debug log
	output   string
	offered  []string
	answered bool
}

// runClaudeWithBridge runs `claude -p` (its model a messagesModel) in the
// machine's checkout with the bridge to server as its one MCP server, as
// install claude-code writes it, and --debug on.
func runClaudeWithBridge(t *testing.T, claude string, m *agentMachine, server string) claudeRun {
	t.Helper()
	model := startMessagesModel(t, "mcp__osfoundry__list_sessions")
	dir := t.TempDir()
	cfg, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{"osfoundry": map[string]any{"type": "stdio", "command": "osfoundry",
		"args": []string{"agent", "mcp", "--server", server}}}})
	os.WriteFile(filepath.Join(dir, "mcp.json"), cfg, 0o600)
	debugFile := filepath.Join(dir, "debug.log")
	cmd := exec.Command(claude, "-p", "List my sessions.", "--mcp-config", filepath.Join(dir, "mcp.json"), "--strict-mcp-config",
		"--allowedTools", "mcp__osfoundry", "--output-format", "json", "--max-turns", "6", "--debug-file", debugFile)
	cmd.Dir = m.checkout
	cmd.Env = append(withPath(m.env(), filepath.Dir(binary(t))), "ANTHROPIC_BASE_URL="+model.URL, "ANTHROPIC_API_KEY=sk-ant-scripted",
		"CLAUDE_CONFIG_DIR="+filepath.Join(dir, "config"), "DISABLE_TELEMETRY=1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Logf("claude -p: %v", err)
	}
	debug, _ := os.ReadFile(debugFile)
	model.mu.Lock()
	defer model.mu.Unlock()
	r := claudeRun{debug: string(debug), output: out.String(), offered: model.offered}
	if model.result != nil {
		r.result, r.isError, r.answered = model.result.Text, model.result.IsError, true
	}
	return r
}

// TestClaudeCodeKeepsTheBridgeWhenBroken runs the real Claude Code (`claude
// -p`, its model scripted) with the bridge of a checkout that was revoked,
// never logged in, or whose server is down or hangs: each time Claude Code
// connects the server (its debug log shows no invalid initialize or schema
// error), loads its tools, and the model's tool call reads how to sign in
// again. Claude Code is not a dependency of osFoundry: the test runs when
// OSFOUNDRY_CLAUDE names its binary (npm's @anthropic-ai/claude-code).
func TestClaudeCodeKeepsTheBridgeWhenBroken(t *testing.T) {
	claude := claudeBinary()
	if claude == "" {
		t.Skip("no Claude Code binary: make node-deps installs it, or set OSFOUNDRY_CLAUDE")
	}
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "claude-broken")
	login := "`osfoundry agent login --server " + s.URL + "`"
	startBridge(t, m, s.URL).handshake() // while all is well: the server's answers are kept

	check := func(t *testing.T, r claudeRun, want ...string) {
		t.Helper()
		for _, bad := range []string{"Invalid result for initialize", "invalid_type", "ZodError", "Failed to connect"} {
			if strings.Contains(r.debug, bad) {
				i := strings.Index(r.debug, bad)
				t.Errorf("the debug log shows %q: …%s…", bad, r.debug[max(0, i-300):min(len(r.debug), i+300)])
			}
		}
		if !strings.Contains(r.debug, `MCP server "osfoundry": Successfully connected`) {
			t.Errorf("the debug log does not show the server connected:\n%.3000s", r.debug)
		}
		if !r.answered || !r.isError {
			t.Fatalf("no error result of list_sessions reached the model (offered %v):\n%s\n%.3000s", r.offered, r.output, r.debug)
		}
		for _, w := range want {
			if !strings.Contains(r.result, w) {
				t.Errorf("the tool result lacks %q: %q", w, r.result)
			}
		}
	}

	t.Run("never logged in", func(t *testing.T) {
		check(t, runClaudeWithBridge(t, claude, newAgentMachine(t), s.URL), "is not connected to "+s.URL+": run "+login)
	})
	t.Run("a server that hangs", func(t *testing.T) {
		s.silent.Store(true)
		defer s.silent.Store(false)
		check(t, runClaudeWithBridge(t, claude, m, s.URL), "did not answer within", login)
	})
	t.Run("revoked", func(t *testing.T) {
		if err := s.w.st.RevokeConnection(context.Background(), s.w.owner.WorkspaceID, conn); err != nil {
			t.Fatal(err)
		}
		check(t, runClaudeWithBridge(t, claude, m, s.URL), "was revoked; run "+login+" again")
	})
	t.Run("a server that is down", func(t *testing.T) {
		s.gate.Close()
		check(t, runClaudeWithBridge(t, claude, m, s.URL), "cannot reach the osFoundry server at "+s.URL, login)
	})
}

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"
)

// stdioClient speaks to `osfoundry agent mcp` as Claude Code and Codex do:
// newline-delimited JSON-RPC, initialize first.
type stdioClient struct {
	t       *testing.T
	in      io.WriteCloser
	answers chan map[string]json.RawMessage
	nextID  int
}

// startBridge starts the machine's bridge for server.
func startBridge(t *testing.T, m *agentMachine, server string) *stdioClient {
	t.Helper()
	cmd := m.command("agent", "mcp", "--server", server)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &stdioClient{t: t, in: in, answers: make(chan map[string]json.RawMessage, 10)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 32<<20)
		for sc.Scan() {
			var msg map[string]json.RawMessage
			if json.Unmarshal(sc.Bytes(), &msg) == nil && msg["id"] != nil {
				c.answers <- msg
			}
		}
		close(c.answers)
	}()
	t.Cleanup(func() { in.Close(); cmd.Process.Kill(); cmd.Wait() })
	return c
}

// request sends one request and returns its result, failing on a JSON-RPC
// error or no answer within limit (the client's own timeout).
func (c *stdioClient) request(method string, params any, limit time.Duration) map[string]json.RawMessage {
	c.t.Helper()
	c.nextID++
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	fmt.Fprintf(c.in, "%s\n", b)
	select {
	case a, ok := <-c.answers:
		if !ok {
			c.t.Fatalf("%s: the bridge ended", method)
		}
		if string(a["id"]) != fmt.Sprint(c.nextID) {
			c.t.Fatalf("%s: answer to another request: %v", method, a)
		}
		var res map[string]json.RawMessage
		if err := json.Unmarshal(a["result"], &res); err != nil || a["error"] != nil {
			c.t.Fatalf("%s: want a result, got %s %s", method, a["result"], a["error"])
		}
		return res
	case <-time.After(limit):
		c.t.Fatalf("%s: no answer within %s", method, limit)
	}
	return nil
}

// connectTimeout is what Codex gives a stdio server to answer initialize
// and tools/list (startup_timeout_sec, 10 s); Claude Code gives 30 s.
const connectTimeout = 10 * time.Second

// handshake does initialize and tools/list as the clients do, checks each
// result has what the clients' schemas require, and returns the tool names.
func (c *stdioClient) handshake() []string {
	c.t.Helper()
	start := time.Now()
	defer func() {
		c.t.Logf("initialize and tools/list answered in %s", time.Since(start).Round(time.Millisecond))
	}()
	init := c.request("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "claude-code", "version": "2.1.328"}}, connectTimeout)
	var version string
	var caps, info map[string]any
	if json.Unmarshal(init["protocolVersion"], &version) != nil || version == "" || json.Unmarshal(init["capabilities"], &caps) != nil ||
		caps == nil || json.Unmarshal(init["serverInfo"], &info) != nil || info["name"] == nil || info["version"] == nil {
		c.t.Fatalf("initialize: not a valid result: %s", jsonText(init))
	}
	if _, isToolError := init["isError"]; isToolError {
		c.t.Fatalf("initialize answered with a tool error: %s", jsonText(init))
	}
	fmt.Fprintln(c.in, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	list := c.request("tools/list", map[string]any{}, connectTimeout)
	var tools []struct {
		Name        string         `json:"name"`
		InputSchema map[string]any `json:"inputSchema"`
	}
	if err := json.Unmarshal(list["tools"], &tools); err != nil || list["tools"] == nil {
		c.t.Fatalf("tools/list: not a list of tools: %s", jsonText(list))
	}
	var names []string
	for _, tl := range tools {
		if tl.Name == "" || tl.InputSchema == nil {
			c.t.Fatalf("tools/list: a tool without a name or schema: %s", jsonText(list))
		}
		names = append(names, tl.Name)
	}
	return names
}

// call calls a tool and returns whether it is an error and its text.
func (c *stdioClient) call(tool string, limit time.Duration) (bool, string) {
	c.t.Helper()
	res := c.request("tools/call", map[string]any{"name": tool, "arguments": map[string]any{}}, limit)
	var isError bool
	json.Unmarshal(res["isError"], &isError)
	var content []struct{ Text string }
	json.Unmarshal(res["content"], &content)
	var b strings.Builder
	for _, p := range content {
		b.WriteString(p.Text)
	}
	return isError, b.String()
}

// TestAgentMCPBridgeHandshakeNeverBreaks: whatever the state of the
// checkout's sign-in and of the server, the bridge completes initialize and
// tools/list with valid results within the clients' connect timeout, and
// each tool call then answers isError naming the way back.
func TestAgentMCPBridgeHandshakeNeverBreaks(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "handshake-bot")
	login := "`osfoundry agent login --server " + s.URL + "`"

	// A first session while all is well: the server's answers are kept.
	healthy := startBridge(t, m, s.URL).handshake()
	if !containsAll(healthy, "set_status", "list_sessions", "read_session_mail") {
		t.Fatalf("tools through the bridge: %v", healthy)
	}

	t.Run("a server that hangs", func(t *testing.T) {
		s.silent.Store(true)
		defer s.silent.Store(false)
		c := startBridge(t, m, s.URL)
		if tools := c.handshake(); strings.Join(tools, ",") != strings.Join(healthy, ",") {
			t.Fatalf("want the kept tools list, got %v", tools)
		}
		isError, text := c.call("list_sessions", connectTimeout)
		if !isError || !strings.Contains(text, "did not answer within") || !strings.Contains(text, login) {
			t.Fatalf("a tool call while the server hangs: %v %q", isError, text)
		}
	})

	t.Run("a checkout never logged in", func(t *testing.T) {
		c := startBridge(t, newAgentMachine(t), s.URL)
		if tools := c.handshake(); !containsAll(tools, "set_status", "list_sessions") {
			t.Fatalf("want the anonymous server's tools, got %v", tools)
		}
		isError, text := c.call("list_sessions", connectTimeout)
		if !isError || !strings.Contains(text, "is not connected to "+s.URL+": run "+login) {
			t.Fatalf("a tool call without credentials: %v %q", isError, text)
		}
	})

	t.Run("a revoked checkout", func(t *testing.T) {
		if err := s.w.st.RevokeConnection(context.Background(), s.w.owner.WorkspaceID, conn); err != nil {
			t.Fatal(err)
		}
		c := startBridge(t, m, s.URL)
		if tools := c.handshake(); !containsAll(tools, "set_status", "list_sessions") {
			t.Fatalf("want the anonymous server's tools, got %v", tools)
		}
		isError, text := c.call("list_sessions", connectTimeout)
		if !isError || !strings.Contains(text, "was revoked; run "+login+" again") {
			t.Fatalf("a tool call after revocation: %v %q", isError, text)
		}
	})

	t.Run("a server that is down", func(t *testing.T) {
		s.gate.Close()
		c := startBridge(t, m, s.URL)
		if tools := c.handshake(); strings.Join(tools, ",") != strings.Join(healthy, ",") {
			t.Fatalf("want the kept tools list, got %v", tools)
		}
		isError, text := c.call("list_sessions", connectTimeout)
		if !isError || !strings.Contains(text, "cannot reach the osFoundry server at "+s.URL) || !strings.Contains(text, login) {
			t.Fatalf("a tool call while the server is down: %v %q", isError, text)
		}

		// Never connected, nothing kept: still a valid, empty handshake.
		c = startBridge(t, newAgentMachine(t), s.URL)
		if tools := c.handshake(); len(tools) != 0 {
			t.Fatalf("with nothing kept, want no tools, got %v", tools)
		}
		if isError, text := c.call("list_sessions", connectTimeout); !isError || !strings.Contains(text, login) {
			t.Fatalf("a tool call while the server is down, never connected: %v %q", isError, text)
		}
	})
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func containsAll(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

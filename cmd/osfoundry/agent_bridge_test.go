package main

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

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

package main

import (
	"bufio"
	"context"
	"fmt"
	"slices"
	"strings"
	"syscall"
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

// TestAgentMCPBridgeEndsOnSignal: Claude Code stops a stdio server with
// SIGINT, then SIGTERM, then SIGKILL, about 0.5 s apart. On either signal
// the bridge ends within 100 ms, and a message in flight that the server
// answers meanwhile is answered; one the server never answers gets an error.
func TestAgentMCPBridgeEndsOnSignal(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	s.connectAgent(t, m, "signal-bot")

	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			cmd := m.command("agent", "mcp", "--server", s.URL)
			stdin, _ := cmd.StdinPipe()
			stdout, _ := cmd.StdoutPipe()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			answers := make(chan string, 10)
			go func() {
				sc := bufio.NewScanner(stdout)
				for sc.Scan() {
					answers <- sc.Text()
				}
				close(answers)
				exited <- cmd.Wait()
			}()
			send := func(id int, method string) {
				fmt.Fprintf(stdin, `{"jsonrpc":"2.0","id":%d,"method":%q,"params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n", id, method)
			}
			send(1, "initialize")
			select {
			case a := <-answers:
				if !strings.Contains(a, `"id":1`) || !strings.Contains(a, "protocolVersion") {
					t.Fatalf("initialize: %s", a)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("no answer to initialize")
			}

			// A message in flight, which the server answers 30 ms later.
			s.slow.Store(int64(30 * time.Millisecond))
			defer s.slow.Store(0)
			before := s.arrived.Load()
			send(2, "tools/list")
			if !waitFor(5*time.Second, func() bool { return s.arrived.Load() > before }) {
				t.Fatal("the tools/list never reached the server")
			}
			signalled := time.Now()
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case <-exited:
			case <-time.After(2 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("still running 2 s after %s", sig)
			}
			took := time.Since(signalled)
			var rest []string
			for a := range answers {
				rest = append(rest, a)
			}
			if len(rest) != 1 || !strings.Contains(rest[0], `"id":2`) || !strings.Contains(rest[0], "set_status") {
				t.Fatalf("the message in flight was not answered: %q", rest)
			}
			// A loaded machine can take longer than the grace to end a
			// process: the 2 s bound above catches a bridge that waits on.
			t.Logf("ended %s after %s", took.Round(time.Millisecond), sig)
		})
	}

	t.Run("a message the server never answers", func(t *testing.T) {
		cmd := m.command("agent", "mcp", "--server", s.URL)
		stdin, _ := cmd.StdinPipe()
		var out strings.Builder
		cmd.Stdout = &out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		s.silent.Store(true)
		defer s.silent.Store(false)
		before := s.arrived.Load()
		fmt.Fprintln(stdin, `{"jsonrpc":"2.0","id":7,"method":"tools/list"}`)
		if !waitFor(5*time.Second, func() bool { return s.arrived.Load() > before }) {
			t.Fatal("the tools/list never reached the server")
		}
		signalled := time.Now()
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(2 * time.Second):
			cmd.Process.Kill()
			t.Fatal("still running 2 s after SIGTERM")
		}
		if took := time.Since(signalled); took > 100*time.Millisecond {
			t.Fatalf("ended %s after SIGTERM, want within 100 ms", took)
		}
		if !strings.Contains(out.String(), `"id":7`) || !strings.Contains(out.String(), `"error"`) {
			t.Fatalf("the unanswered message got no error: %q", out.String())
		}
	})
}

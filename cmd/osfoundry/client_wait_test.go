package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// toolWait is what e2e/tool-wait.mjs reports of one ask_owner call made
// with the TypeScript SDK.
type toolWait struct {
	Mode      string `json:"mode"`
	Reset     bool   `json:"reset"`
	TimeoutMS int    `json:"timeout_ms"`
	Ended     string `json:"ended"`
	Status    string `json:"status"`
	Code      *int   `json:"code"`
	Error     string `json:"error"`
	Text      string `json:"text"`
	ElapsedMS int    `json:"elapsed_ms"`
	Progress  int    `json:"progress"`
}

// TestTypeScriptSDKToolCallWaits measures how long the TypeScript SDK's
// client waits for an ask_owner call that waits longer than its request
// timeout, straight over HTTP and through the stdio bridge (osfoundry
// agent mcp): without resetTimeoutOnProgress the SDK gives up at its
// timeout whatever the server sends; with it, the server's progress
// notifications (every 15 s) keep the call alive to its end. The go-sdk
// client, which has no timeout of its own, waits it out. By default the
// timeout is 20 s and the wait 35 s; OSFOUNDRY_MEASURE_CLIENT_WAITS=1
// measures the SDK's own default (60 s) against a 90 s wait.
func TestTypeScriptSDKToolCallWaits(t *testing.T) {
	t.Parallel()
	root, _ := filepath.Abs("../..")
	script := filepath.Join(root, "e2e", "tool-wait.mjs")
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed (make node-deps installs it)")
	}
	if _, err := os.Stat(filepath.Join(root, "node_modules", "@modelcontextprotocol", "sdk")); err != nil {
		t.Skip("the npm packages are not installed (make node-deps)")
	}
	timeout, wait := "20000", 35
	if os.Getenv("OSFOUNDRY_MEASURE_CLIENT_WAITS") == "1" {
		timeout, wait = "", 90
	}
	s := startAgentServer(t)
	m := newAgentMachine(t)
	s.connectAgent(t, m, "wait-bot")
	token := m.credentials().AccessToken
	bin := binary(t)

	var wg sync.WaitGroup
	var mu sync.Mutex
	var got []toolWait
	for _, mode := range []string{"http", "stdio"} {
		for _, reset := range []string{"0", "1"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command("node", script)
				cmd.Dir = root
				cmd.Env = append(m.env(), "MODE="+mode, "URL="+s.URL, "TOKEN="+token, "BRIDGE="+bin, "CHECKOUT="+m.checkout, "SESSION_TYPE="+s.w.session.Type,
					"SESSION_ID="+s.w.session.PublicID, fmt.Sprintf("WAIT_SECONDS=%d", wait), "KEY=wait-"+mode+"-"+reset,
					"TIMEOUT_MS="+timeout, "RESET="+reset)
				out, err := cmd.Output()
				var w toolWait
				if err != nil || json.Unmarshal(out, &w) != nil {
					t.Errorf("%s reset=%s: %v %s", mode, reset, err, out)
					return
				}
				mu.Lock()
				got = append(got, w)
				mu.Unlock()
			}()
		}
	}
	// The go-sdk client, which has no timeout of its own: the same wait over
	// HTTP and through the bridge, with a context that never ends.
	for _, mode := range []string{"http", "stdio"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := context.Background()
			var tr mcp.Transport = &mcp.StreamableClientTransport{Endpoint: s.URL + "/mcp", HTTPClient: &http.Client{Transport: bearer(token)}}
			if mode == "stdio" {
				cmd := m.command("agent", "mcp", "--server", s.URL)
				tr = &mcp.CommandTransport{Command: cmd}
			}
			sess, err := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-wait", Version: "1"}, nil).Connect(ctx, tr, nil)
			if err != nil {
				t.Errorf("go-sdk over %s: %v", mode, err)
				return
			}
			defer sess.Close()
			start := time.Now()
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "ask_owner", Arguments: map[string]any{"session_type": s.w.session.Type,
				"session_id": s.w.session.PublicID, "question": "How long does the go-sdk wait? (" + mode + ")", "wait_seconds": wait,
				"idempotency_key": "wait-go-" + mode}})
			took := time.Since(start)
			if err != nil || res.IsError {
				t.Errorf("go-sdk over %s: %v %+v", mode, err, res)
				return
			}
			status, _ := res.StructuredContent.(map[string]any)["status"].(string)
			t.Logf("go-sdk client over %s, no timeout, wait_seconds %d: result after %v (%s)", mode, wait, took.Round(100*time.Millisecond), status)
			if status != "open" || took < time.Duration(wait)*time.Second {
				t.Errorf("go-sdk over %s: want the call to last its wait and end open: %s after %v", mode, status, took)
			}
		}()
	}
	wg.Wait()
	if len(got) != 4 {
		t.FailNow()
	}
	for _, w := range got {
		limit := time.Duration(w.TimeoutMS) * time.Millisecond
		took := time.Duration(w.ElapsedMS) * time.Millisecond
		what := fmt.Sprintf("TS SDK over %s, timeout %v, resetTimeoutOnProgress %v, wait_seconds %d", w.Mode, limit, w.Reset, wait)
		t.Logf("%s: %s after %v (%s%s%s), %d progress notifications", what, w.Ended, took.Round(100*time.Millisecond), w.Status, w.Error, w.Text, w.Progress)
		if w.Reset {
			if w.Ended != "result" || w.Status != "open" || took < time.Duration(wait)*time.Second || w.Progress < 2 {
				t.Errorf("%s: want the call to last its wait and end open, kept alive by progress: %+v", what, w)
			}
			continue
		}
		if w.Ended != "error" || w.Code == nil || *w.Code != -32001 || took < limit || took > limit+5*time.Second {
			t.Errorf("%s: want the SDK's request timeout (-32001) at %v: %+v", what, limit, w)
		}
	}
}

// claudeWait is what e2e/claude-tool-wait.mjs reports of one ask_owner
// call made by Claude Code.
type claudeWait struct {
	Mode           string  `json:"mode"`
	MCPToolTimeout *string `json:"mcp_tool_timeout"`
	Tool           string  `json:"tool"`
	EndedMS        int     `json:"ended_ms"`
	Result         string  `json:"result"`
	IsError        bool    `json:"is_error"`
	Exit           int     `json:"exit"`
	Stdout         string  `json:"stdout"`
	Stderr         string  `json:"stderr"`
}

// TestClaudeCodeToolCallWaits measures how long Claude Code (`claude -p`,
// its model a scripted Messages API on loopback) waits for an ask_owner
// call that waits longer than a minute, straight over HTTP and through the
// stdio bridge, and what MCP_TOOL_TIMEOUT does to it. Claude Code is not a
// dependency of osFoundry: the test runs when OSFOUNDRY_CLAUDE names its
// binary (OSFOUNDRY_CLAUDE_WAIT sets wait_seconds, default 100).
func TestClaudeCodeToolCallWaits(t *testing.T) {
	claude := os.Getenv("OSFOUNDRY_CLAUDE")
	if claude == "" {
		t.Skip("OSFOUNDRY_CLAUDE does not name a Claude Code binary")
	}
	t.Parallel()
	root, _ := filepath.Abs("../..")
	wait := 100
	if v := os.Getenv("OSFOUNDRY_CLAUDE_WAIT"); v != "" {
		fmt.Sscan(v, &wait)
	}
	s := startAgentServer(t)
	m := newAgentMachine(t)
	s.connectAgent(t, m, "claude-wait")
	token := m.credentials().AccessToken
	runs := []struct{ mode, timeout string }{{"http", ""}, {"stdio", ""}, {"http", "20000"}, {"stdio", "20000"}}
	var wg sync.WaitGroup
	got := make([]claudeWait, len(runs))
	for i, r := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("node", filepath.Join(root, "e2e", "claude-tool-wait.mjs"))
			cmd.Dir = root
			cmd.Env = append(m.env(), "CLAUDE="+claude, "MODE="+r.mode, "URL="+s.URL, "TOKEN="+token, "BRIDGE="+binary(t), "CHECKOUT="+m.checkout,
				"SESSION_TYPE="+s.w.session.Type, "SESSION_ID="+s.w.session.PublicID, fmt.Sprintf("WAIT_SECONDS=%d", wait), fmt.Sprintf("KEY=claude-%d", i))
			if r.timeout != "" {
				cmd.Env = append(cmd.Env, "MCP_TOOL_TIMEOUT="+r.timeout)
			}
			out, err := cmd.Output()
			if err != nil || json.Unmarshal(out, &got[i]) != nil {
				t.Errorf("%s: %v %s", r.mode, err, out)
			}
		}()
	}
	wg.Wait()
	for i, g := range got {
		t.Logf("Claude Code over %s, MCP_TOOL_TIMEOUT %q, wait_seconds %d: the tool result came after %v (error %v): %.300s %s %s",
			runs[i].mode, runs[i].timeout, wait, (time.Duration(g.EndedMS) * time.Millisecond).Round(100*time.Millisecond), g.IsError, g.Result, g.Stdout, g.Stderr)
		if g.EndedMS == 0 {
			t.Errorf("%s: no tool result reached the model", runs[i].mode)
		}
	}
}

// bearer is a transport that sends the token with every request.
type bearer string

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(b))
	return http.DefaultTransport.RoundTrip(r)
}

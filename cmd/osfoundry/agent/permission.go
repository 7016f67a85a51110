package agent

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// The PermissionRequest hook brings a client's prompt to the owners as an
// approval and waits for their decision. Without one (no server, the wait
// over) it gives no verdict, so the client falls back to its own prompt: the
// hook never allows by itself.

const (
	permissionSetup = 1700 * time.Millisecond // with no server, no verdict within 2 s
	permissionPoll  = 50 * time.Second
	permissionGrace = 3 * time.Second // past the wait, for the server's last word
	maxSummary      = 500             // what the server takes of a summary
)

type permissionInput struct {
	hookInput
	ToolName  string          `json:"tool_name"`
	ToolInput json.RawMessage `json:"tool_input"`
}

// permissionOutput is the verdict Claude Code and Codex read.
type permissionOutput struct {
	HookSpecificOutput struct {
		HookEventName string `json:"hookEventName"`
		Decision      struct {
			Behavior string `json:"behavior"`
			Message  string `json:"message,omitempty"`
		} `json:"decision"`
	} `json:"hookSpecificOutput"`
}

type approvalState struct {
	ID          int64  `json:"id"`
	State       string `json:"state"`
	Reason      string `json:"reason"`
	DecidedBy   string `json:"decided_by"`
	WaitSeconds int    `json:"wait_seconds"`
}

// runPermission returns the verdict to print, or nil for none. extend moves
// the hook's watchdog once the server said how long the wait is.
func runPermission(dirs folders, server string, raw []byte, extend func(time.Duration), logf func(string, ...any)) *permissionOutput {
	var in permissionInput
	if err := json.Unmarshal(raw, &in); err != nil {
		logf("read the permission request: %v", err)
		return nil
	}
	if in.ToolName == "" {
		logf("the permission request names no tool")
		return nil
	}
	setup, cancel := context.WithTimeout(context.Background(), permissionSetup)
	defer cancel()
	c, err := checkoutClient(setup, dirs, server, in.hookInput)
	if err != nil {
		logf("%v", err)
		return nil
	}
	top, branch := gitTopAndBranch(setup, c.acct.checkout, true)
	body := map[string]string{"tool": clip(in.ToolName, 200), "summary": summarize(in.ToolName, in.ToolInput),
		"repo": clip(repoName(setup, c.acct.checkout), 300), "client_session": clip(in.SessionID, 200)}
	if top != "" {
		body["branch"] = clip(branch, 200)
	}
	var a approvalState
	status, err := c.agentJSON(setup, http.MethodPost, "/agent/approvals", body, &a)
	switch {
	case err != nil:
		logf("ask for an approval: %v", err)
		return nil
	case status == http.StatusOK && a.State == "off":
		return nil // approvals are off for the project
	case status != http.StatusCreated || a.ID == 0:
		logf("ask for an approval: the server answered HTTP %d", status)
		return nil
	}
	cancel()
	wait := time.Duration(a.WaitSeconds) * time.Second
	extend(wait + permissionGrace + 2*time.Second)
	release := c.acct.markPrompt(a.ID)
	defer release()
	got := c.awaitDecision(a, time.Now().Add(wait+permissionGrace), logf)
	switch got.State {
	case "allowed":
		return verdict(in.HookEventName, "allow", "")
	case "denied":
		msg := "Denied in osFoundry by " + oneLine(valueOr(got.DecidedBy, "an owner")) + "."
		if r := strings.TrimSpace(got.Reason); r != "" {
			msg += " Their reason: " + r
		}
		return verdict(in.HookEventName, "deny", msg)
	}
	return nil
}

func valueOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func verdict(event, behavior, message string) *permissionOutput {
	var o permissionOutput
	o.HookSpecificOutput.HookEventName = valueOr(event, "PermissionRequest")
	o.HookSpecificOutput.Decision.Behavior = behavior
	o.HookSpecificOutput.Decision.Message = message
	return &o
}

// awaitDecision long-polls the approval until it is decided, ended or past
// deadline, retrying a server out of reach.
func (c *client) awaitDecision(a approvalState, deadline time.Time, logf func(string, ...any)) approvalState {
	backoff := 250 * time.Millisecond
	path := "/agent/approvals/" + strconv.FormatInt(a.ID, 10)
	for a.State == "pending" {
		left := time.Until(deadline)
		if left <= 0 {
			break
		}
		poll := min(left, permissionPoll)
		ctx, cancel := context.WithTimeout(context.Background(), poll+5*time.Second)
		var got approvalState
		status, err := c.agentJSON(ctx, http.MethodGet, path+"?wait="+strconv.Itoa(max(int(poll/time.Second), 1)), nil, &got)
		cancel()
		switch {
		case err == nil && status == http.StatusOK:
			a, backoff = got, 250*time.Millisecond
			continue
		case err == nil && status == http.StatusNotFound:
			logf("approval %d: the server no longer knows it", a.ID)
			return approvalState{State: "gone"}
		case err != nil:
			var revoked *revokedError
			if errors.As(err, &revoked) {
				logf("%v", err)
				return a
			}
			logf("wait for approval %d: %v", a.ID, err)
		default:
			logf("wait for approval %d: the server answered HTTP %d", a.ID, status)
		}
		time.Sleep(min(backoff, time.Until(deadline))) // the server is out of reach: try again shortly
		backoff = min(backoff*2, 5*time.Second)
	}
	return a
}

func checkoutClient(ctx context.Context, dirs folders, server string, in hookInput) (*client, error) {
	if dirs.Config == "" {
		return nil, errors.New("no user config folder")
	}
	server, err := normalizeServer(server)
	if err != nil {
		return nil, err
	}
	checkout, err := checkoutOf(ctx, startDir(in.Cwd))
	if err != nil {
		return nil, err
	}
	return newClient(account{dirs: dirs, server: server, checkout: checkout})
}

// agentJSON calls an agent endpoint (a refused token is replaced once) and
// decodes its JSON answer into out.
func (c *client) agentJSON(ctx context.Context, method, path string, body, out any) (int, error) {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return 0, err
		}
	}
	tok, err := c.token(ctx, "")
	if err != nil {
		return 0, err
	}
	for try := 0; ; try++ {
		req, err := http.NewRequestWithContext(ctx, method, c.acct.server+path, bytes.NewReader(payload))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("User-Agent", userAgent)
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := c.http.Do(req)
		if err != nil {
			return 0, &unreachableError{Server: c.acct.server, Err: err}
		}
		b, err := io.ReadAll(io.LimitReader(res.Body, 1<<20))
		res.Body.Close()
		if err != nil {
			return 0, &unreachableError{Server: c.acct.server, Err: err}
		}
		if res.StatusCode == http.StatusUnauthorized {
			if try > 0 {
				return 0, &revokedError{Server: c.acct.server}
			}
			if tok, err = c.token(ctx, tok); err != nil {
				return 0, err
			}
			continue
		}
		if out != nil && res.StatusCode < 300 {
			if err := json.Unmarshal(b, out); err != nil {
				return res.StatusCode, fmt.Errorf("%s %s: undecodable answer: %w", method, path, err)
			}
		}
		return res.StatusCode, nil
	}
}

// summarize is the one line owners read of a tool's input; the server treats
// it as the agent's own, untrusted text.
func summarize(tool string, input json.RawMessage) string {
	var fields map[string]any
	json.Unmarshal(input, &fields)
	str := func(k string) string { s, _ := fields[k].(string); return s }
	var s string
	switch {
	case str("command") != "":
		s = str("command")
	case str("file_path") != "":
		s = str("file_path")
	case str("notebook_path") != "":
		s = str("notebook_path")
	case str("url") != "":
		s = str("url")
	case str("query") != "" && !strings.HasPrefix(tool, "mcp__"):
		s = str("query")
	case len(fields) > 0:
		var b bytes.Buffer
		json.Compact(&b, input)
		s = b.String()
	}
	s = strings.Join(strings.Fields(oneLine(s)), " ")
	if r := []rune(s); len(r) > maxSummary {
		s = string(r[:maxSummary-1]) + "…"
	}
	return s
}

// promptsDir holds one locked file per approval a hook waits on: one left
// unlocked is a prompt the client answered itself, ending the hook.
func (a account) promptsDir() string { return filepath.Join(a.dirs.State, "approvals") }

func (a account) promptPath(id int64) string {
	return filepath.Join(a.promptsDir(), a.key()+"-"+strconv.FormatInt(id, 10))
}

func (a account) markPrompt(id int64) (release func()) {
	path := a.promptPath(id)
	unlock, ok, err := tryLockFile(path)
	if err != nil || !ok {
		return func() {}
	}
	return func() { os.Remove(path); unlock() }
}

// endAnsweredPrompts closes, as answered at the terminal, the approvals whose
// hook the client ended.
func (c *client) endAnsweredPrompts(ctx context.Context) error {
	return endAnsweredPrompts(ctx, c.acct)
}

// endAnsweredPrompts makes a client only when a prompt file is there.
func endAnsweredPrompts(ctx context.Context, acct account) error {
	entries, err := os.ReadDir(acct.promptsDir())
	if err != nil {
		return nil // no folder: no prompt ever waited
	}
	var errs []error
	var c *client
	for _, e := range entries {
		idText, ok := strings.CutPrefix(e.Name(), acct.key()+"-")
		id, perr := strconv.ParseInt(idText, 10, 64)
		if !ok || perr != nil {
			continue
		}
		path := filepath.Join(acct.promptsDir(), e.Name())
		unlock, free, err := tryLockFile(path)
		if err != nil || !free {
			continue // its hook still waits
		}
		if c == nil {
			if c, err = newClient(acct); err != nil {
				unlock()
				return err
			}
		}
		status, err := c.agentJSON(ctx, http.MethodPost, "/agent/approvals/"+idText+"/end", map[string]string{"state": "terminal"}, nil)
		if err == nil && (status == http.StatusOK || status == http.StatusNotFound) {
			os.Remove(path)
		} else if err != nil {
			errs = append(errs, fmt.Errorf("close approval %d: %w", id, err))
		}
		unlock()
	}
	return errors.Join(errs...)
}

// serverApprovalWait is the project's approval wait, 0 when the server cannot
// tell.
func serverApprovalWait(ctx context.Context, acct account) int {
	c, err := newClient(acct)
	if err != nil {
		return 0
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	var v struct {
		WaitSeconds int `json:"wait_seconds"`
	}
	if status, err := c.agentJSON(ctx, http.MethodGet, "/agent/approval-settings", nil, &v); err != nil || status != http.StatusOK {
		return 0
	}
	return v.WaitSeconds
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// shellCall is the call of Codex's shell tool that runs command outside
// the sandbox (which Codex asks about under approval_policy on-request),
// in the form of whichever shell tool the request offered.
func shellCall(tools []responsesTool, command string) responsesAction {
	escalate := map[string]any{"sandbox_permissions": "require_escalated", "justification": "It writes the file the task names."}
	for _, want := range []string{"exec_command", "shell_command", "shell"} {
		for _, tl := range tools {
			if tl.Namespace != "" || tl.Name != want {
				continue
			}
			switch want {
			case "exec_command":
				escalate["cmd"] = command
			case "shell_command":
				escalate["command"] = command
			default:
				escalate["command"] = []string{"bash", "-lc", command}
			}
			return responsesAction{Call: &tl, Args: escalate}
		}
	}
	return responsesAction{Text: fmt.Sprintf("no shell tool was offered: %v", tools)}
}

// pendingApprovalFor waits until a pending approval whose summary holds
// part shows, or until done closes, and returns it.
func (s *agentServer) pendingApprovalFor(t *testing.T, part string, done <-chan struct{}) (*store.Approval, bool) {
	t.Helper()
	for {
		select {
		case <-done:
			return nil, false
		default:
		}
		as, err := s.w.st.PendingApprovals(context.Background(), s.w.owner.WorkspaceID, 0, 50)
		if err != nil {
			t.Error(err)
			return nil, false
		}
		for _, a := range as {
			if strings.Contains(a.Summary, part) {
				return &a, true
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestCodexAsksTheOwner drives the real Codex CLI (`codex exec`, its model
// a scripted Responses API) in a checkout where `osfoundry agent install
// codex` wrote the hooks, with the approval policy that asks before an
// untrusted command: the model's shell command becomes an approval on the
// session page; allowed, it runs (the file appears); denied with a reason,
// nothing runs and the model's next request carries the owner's reason.
func TestCodexAsksTheOwner(t *testing.T) {
	codex := codexBinary()
	if codex == "" {
		t.Skip("the npm packages are not installed (make node-deps installs Codex)")
	}
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	s.connectAgent(t, m, "codex-bot")
	m.agentCall(s.URL, "post_session_note", map[string]any{"session_type": s.w.session.Type, "session_id": s.w.session.PublicID,
		"subject": "On the totals", "body": "Working.", "idempotency_key": "work-1"})
	ctx := context.Background()
	if err := s.w.st.SetProjectApprovalSettings(ctx, s.w.owner.WorkspaceID, s.w.session.ProjectID, store.ApprovalSettings{Enabled: true, WaitSeconds: 60}); err != nil {
		t.Fatal(err)
	}
	env := withPath(m.env(), filepath.Dir(binary(t)))
	install := exec.Command(binary(t), "agent", "install", "codex", "--server", s.URL, "--approval-wait", "60", "--absolute")
	install.Dir, install.Env = m.checkout, env
	if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "PermissionRequest") {
		t.Fatalf("install codex: %v\n%s", err, out)
	}
	// Codex kills a hook at its timeout: PermissionRequest's covers the wait.
	b, err := os.ReadFile(filepath.Join(m.checkout, ".codex", "hooks.json"))
	if err != nil {
		t.Fatal(err)
	}
	var hooks struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Timeout int `json:"timeout"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(b, &hooks); err != nil {
		t.Fatal(err)
	}
	if g := hooks.Hooks["PermissionRequest"]; len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Timeout != 70 {
		t.Fatalf("PermissionRequest hook of .codex/hooks.json, want the 60 s wait and a 10 s margin:\n%s", b)
	}
	owner := s.owner(t)
	owner.signIn()
	page := fmt.Sprintf("/sessions/%d", s.w.session.ID)

	cases := []struct{ name, file, verdict, reason string }{
		{"allowed", "allowed.txt", "allow", ""},
		{"denied", "denied.txt", "deny", "Use the staging bucket instead"},
	}
	for _, c := range cases {
		command := "echo hi > " + c.file
		model := startResponsesModel(t, func(body string, tools []responsesTool) responsesAction {
			if !strings.Contains(body, `"function_call_output"`) {
				return shellCall(tools, command)
			}
			return responsesAction{Text: "Done."}
		})
		decided, exited := make(chan *store.Approval, 1), make(chan struct{})
		go func() {
			a, ok := s.pendingApprovalFor(t, c.file, exited)
			if ok {
				if code, body := owner.decide(page, a.ID, c.verdict, c.reason); code != http.StatusOK {
					t.Errorf("%s: %d %s", c.name, code, body)
				}
			}
			decided <- a
		}()
		out, err := runCodexWith(t, codex, m, env, model, "Write the file.",
			"--approve-for-me")
		close(exited)
		a := <-decided
		model.mu.Lock()
		turns := model.turns
		model.mu.Unlock()
		if err != nil || a == nil {
			for i, tr := range turns {
				t.Logf("request %d: %.3000s", i+1, tr)
			}
			t.Fatalf("%s: codex exec: %v (approval %v)\n%s\n%s", c.name, err, a, out, m.hookLog())
		}
		t.Logf("%s: the approval %q (tool %s)", c.name, a.Summary, a.Tool)
		_, statErr := os.Stat(filepath.Join(m.checkout, c.file))
		last := ""
		if len(turns) > 0 {
			last = turns[len(turns)-1]
		}
		switch c.verdict {
		case "allow":
			if statErr != nil {
				t.Errorf("allowed: the command did not run: %v\n%s", statErr, out)
			}
		case "deny":
			if statErr == nil {
				t.Errorf("denied: the command ran")
			}
			if len(turns) < 2 || !strings.Contains(last, c.reason) {
				t.Errorf("denied: the model's next request lacks the reason:\n%.3000s", last)
			}
			if i := strings.Index(last, c.reason); i >= 0 {
				t.Logf("the model reads: …%s…", last[max(0, i-300):i+len(c.reason)])
			}
		}
		got, _ := s.w.st.OwnerApproval(ctx, s.w.owner.WorkspaceID, a.ID)
		if want := map[string]string{"allow": store.ApprovalAllowed, "deny": store.ApprovalDenied}[c.verdict]; got.State != want {
			t.Errorf("%s: the approval is %s, want %s", c.name, got.State, want)
		}
	}
}

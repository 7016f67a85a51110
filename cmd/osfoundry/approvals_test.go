package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/osfoundry/osfoundry/store"
)

// pendingApproval waits until the connection's pending approval with the
// summary shows, and returns it.
func (s *agentServer) pendingApproval(t *testing.T, summary string) *store.Approval {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		as, err := s.w.st.PendingApprovals(context.Background(), s.w.owner.WorkspaceID, 0, 50)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range as {
			if a.Summary == summary {
				return &a
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("no pending approval for %q", summary)
	return nil
}

// waitPromptMarked waits until a hook of the machine has marked that it
// waits on the approval id (its file in the state folder's approvals).
func (m *agentMachine) waitPromptMarked(id int64) {
	m.t.Helper()
	suffix := "-" + strconv.FormatInt(id, 10)
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		found := false
		_ = filepath.WalkDir(filepath.Join(m.root, "state"), func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && filepath.Base(filepath.Dir(path)) == "approvals" && strings.HasSuffix(d.Name(), suffix) {
				found = true
			}
			return nil
		})
		if found {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	m.t.Fatalf("no hook marked that it waits on approval %d", id)
}

// decide clicks Allow or Deny on the approval's box of the page it shows on
// (an htmx request, as the page sends it) and returns the status and body.
func (o *ownerBrowser) decide(page string, id int64, verdict, reason string) (int, string) {
	o.t.Helper()
	return o.decision(page, id, verdict, reason)()
}

// decision loads the page with the approval's box and returns the click,
// to be sent later (two owners at once).
func (o *ownerBrowser) decision(page string, id int64, verdict, reason string) func() (int, string) {
	o.t.Helper()
	_, doc, err := o.page(page)
	if err != nil {
		o.t.Fatal(err)
	}
	form := inputs(doc, fmt.Sprintf("[data-approval-id='%d'] form", id), false)
	if len(form) == 0 {
		o.t.Fatalf("no approval form for %d on %s", id, page)
	}
	form.Set("verdict", verdict)
	form.Set("reason", reason)
	return func() (int, string) {
		req, _ := http.NewRequest(http.MethodPost, o.abs(fmt.Sprintf("/approvals/%d/decide", id)), strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		req.Header.Set("HX-Request", "true")
		res, err := o.c.Do(req)
		if err != nil {
			return 0, err.Error()
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
}

// permissionRequest runs the hook on a PermissionRequest for command, as
// Claude Code does.
func (m *agentMachine) permissionRequest(server, command string) hookRun {
	m.t.Helper()
	return m.hookEvent(server, "PermissionRequest", func(in map[string]any) {
		in["tool_input"] = map[string]any{"command": command, "description": "a test"}
	})
}

// verdictOf reads the hook's verdict: "" for none, else the behavior and
// the message.
func verdictOf(t *testing.T, r hookRun) (behavior, message string) {
	t.Helper()
	if r.code != 0 {
		t.Fatalf("hook exit %d: %s", r.code, r.stderr)
	}
	if strings.TrimSpace(r.stdout) == "" {
		return "", ""
	}
	var v struct {
		HookSpecificOutput struct {
			HookEventName string `json:"hookEventName"`
			Decision      struct {
				Behavior string `json:"behavior"`
				Message  string `json:"message"`
			} `json:"decision"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &v); err != nil || v.HookSpecificOutput.HookEventName != "PermissionRequest" {
		t.Fatalf("hook answer %q: %v", r.stdout, err)
	}
	return v.HookSpecificOutput.Decision.Behavior, v.HookSpecificOutput.Decision.Message
}

// TestPermissionHookWaitsForTheOwner runs `osfoundry agent hook` on
// PermissionRequest events against a real server: owners decide on a
// second server process (the waiting hook's long poll hears it through the
// database), the first decision wins and a later one is refused naming who
// decided, a denial carries its reason, and nobody deciding, or no server,
// gives no verdict.
func TestPermissionHookWaitsForTheOwner(t *testing.T) {
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	s.connectAgent(t, m, "ada-claude")
	m.agentCall(s.URL, "post_session_note", map[string]any{"session_type": s.w.session.Type, "session_id": s.w.session.PublicID,
		"subject": "On the totals", "body": "Working.", "idempotency_key": "work-1"})
	ctx := context.Background()
	ws := s.w.owner.WorkspaceID
	other := startReplica(t, s.dsn, s.URL)
	otto, err := s.w.st.CreateOwner(ctx, store.NewOwner{Email: "otto@example.com", DisplayName: "Otto", Password: ownerPassword})
	if err != nil {
		t.Fatal(err)
	}
	ada := newOwnerBrowser(t, other.URL, s.w)
	ada.signIn()
	w2 := *s.w
	w2.owner = otto
	ottoAt := newOwnerBrowser(t, other.URL, &w2)
	ottoAt.signIn()
	page := fmt.Sprintf("/sessions/%d", s.w.session.ID)

	t.Run("install writes the project's wait as the hook's timeout", func(t *testing.T) {
		if err := s.w.st.SetProjectApprovalSettings(ctx, ws, s.w.session.ProjectID, store.ApprovalSettings{Enabled: true, WaitSeconds: 45}); err != nil {
			t.Fatal(err)
		}
		defer s.w.st.SetProjectApprovalSettings(ctx, ws, s.w.session.ProjectID, store.DefaultApprovalSettings)
		if _, stderr, code := m.run("", "agent", "install", "claude-code", "--server", s.URL, "--absolute"); code != 0 {
			t.Fatalf("install: %s", stderr)
		}
		b, err := os.ReadFile(filepath.Join(m.checkout, ".claude", "settings.local.json"))
		if err != nil {
			t.Fatal(err)
		}
		var settings struct {
			Hooks map[string][]struct {
				Hooks []struct {
					Command string `json:"command"`
					Timeout int    `json:"timeout"`
				} `json:"hooks"`
			} `json:"hooks"`
		}
		if err := json.Unmarshal(b, &settings); err != nil {
			t.Fatal(err)
		}
		g := settings.Hooks["PermissionRequest"]
		if len(g) != 1 || len(g[0].Hooks) != 1 || g[0].Hooks[0].Timeout != 55 || !strings.Contains(g[0].Hooks[0].Command, "agent hook") {
			t.Fatalf("PermissionRequest hook %+v, want the 45 s wait and a 10 s margin", g)
		}
	})

	t.Run("allowed, the first click wins", func(t *testing.T) {
		done := make(chan hookRun, 1)
		go func() { done <- m.permissionRequest(s.URL, "npm publish") }()
		a := s.pendingApproval(t, "npm publish")
		if a.SessionID == nil || *a.SessionID != s.w.session.ID || a.Tool != "Bash" || a.AgentHandle != "ada-claude" {
			t.Fatalf("approval %+v", a)
		}
		_, doc, err := ada.page(page)
		if err != nil {
			t.Fatal(err)
		}
		box := doc.Find(fmt.Sprintf("[data-approval-id='%d']", a.ID))
		if box.AttrOr("data-state", "") != "pending" || box.AttrOr("data-headline", "") != "@ada-claude asks to run `npm publish` in acme/widgets fix/rounding" ||
			box.Find("[data-testid=approval-allow]").Length() != 1 {
			h, _ := box.Html()
			t.Fatalf("the session page's approval: %s", h)
		}
		_, inbox, err := ada.page("/inbox")
		if err != nil {
			t.Fatal(err)
		}
		if inbox.Find(fmt.Sprintf("#approvals [data-approval-id='%d']", a.ID)).Length() != 1 {
			t.Errorf("the inbox's Needs you lacks the approval")
		}
		var wg sync.WaitGroup
		codes, bodies := make([]int, 2), make([]string, 2)
		for i, click := range []func() (int, string){ada.decision(page, a.ID, "allow", ""), ottoAt.decision(page, a.ID, "allow", "")} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i], bodies[i] = click()
			}()
		}
		wg.Wait()
		slices.Sort(codes)
		if codes[0] != http.StatusOK || codes[1] != http.StatusConflict {
			t.Fatalf("two clicks at once: %v", codes)
		}
		got, _ := s.w.st.OwnerApproval(ctx, ws, a.ID)
		later := bodies[0]
		if !strings.Contains(later, "approval-notice") {
			later = bodies[1]
		}
		doc, _ = goquery.NewDocumentFromReader(strings.NewReader(later))
		if notice := doc.Find("[data-testid=approval-notice]").Text(); notice != got.DecidedBy+" allowed this already" {
			t.Errorf("the later click's refusal %q, want it to name %s", notice, got.DecidedBy)
		}
		if behavior, _ := verdictOf(t, <-done); behavior != "allow" {
			t.Fatalf("hook verdict %q, want allow", behavior)
		}
		if got.DecidedFrom == "" || got.DecidedAt == nil {
			t.Errorf("decision not recorded: %+v", got)
		}
	})

	t.Run("denied with a reason", func(t *testing.T) {
		done := make(chan hookRun, 1)
		go func() { done <- m.permissionRequest(s.URL, "git push --force") }()
		a := s.pendingApproval(t, "git push --force")
		if code, _ := ada.decide(page, a.ID, "deny", "Not before Friday's release"); code != http.StatusOK {
			t.Fatalf("deny: %d", code)
		}
		behavior, msg := verdictOf(t, <-done)
		if behavior != "deny" || !strings.Contains(msg, "Not before Friday's release") || !strings.Contains(msg, s.w.owner.DisplayName) {
			t.Fatalf("hook verdict %q %q", behavior, msg)
		}
	})

	t.Run("nobody decides: no verdict, and the approval expires", func(t *testing.T) {
		if err := s.w.st.SetProjectApprovalSettings(ctx, ws, s.w.session.ProjectID, store.ApprovalSettings{Enabled: true, WaitSeconds: 10}); err != nil {
			t.Fatal(err)
		}
		defer s.w.st.SetProjectApprovalSettings(ctx, ws, s.w.session.ProjectID, store.DefaultApprovalSettings)
		r := m.permissionRequest(s.URL, "rm -rf build")
		if behavior, _ := verdictOf(t, r); behavior != "" {
			t.Fatalf("verdict %q with nobody deciding, want none", behavior)
		}
		as, _ := s.w.st.SessionApprovals(ctx, ws, s.w.session.ID, 1)
		if as[0].Summary != "rm -rf build" || as[0].State != store.ApprovalExpired {
			t.Fatalf("after the wait: %+v", as[0])
		}
		_, doc, _ := ada.page(page)
		if box := doc.Find(fmt.Sprintf("[data-approval-id='%d']", as[0].ID)); box.AttrOr("data-state", "") != "expired" || box.Find("form").Length() != 0 {
			t.Errorf("the session page shows it %q", box.AttrOr("data-state", ""))
		}
	})

	t.Run("answered at the terminal closes at the next hook event", func(t *testing.T) {
		cmd := m.command("agent", "hook", "--server", s.URL)
		cmd.Stdin = strings.NewReader(string(m.fixture("PermissionRequest", func(in map[string]any) {
			in["tool_input"] = map[string]any{"command": "make deploy"}
		})))
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		a := s.pendingApproval(t, "make deploy")
		m.waitPromptMarked(a.ID) // the hook sees the approval created a moment after the server does
		cmd.Process.Kill()       // the client's own prompt was answered: it ends the hook
		cmd.Wait()
		m.resetThrottle()
		m.hookEvent(s.URL, "PostToolUse", nil)
		got, _ := s.w.st.OwnerApproval(ctx, ws, a.ID)
		if got.State != store.ApprovalTerminal {
			t.Fatalf("after the next event: %s", got.State)
		}
	})

	t.Run("read_session_mail and poll_resource_events carry them", func(t *testing.T) {
		mail := m.agentCall(s.URL, "read_session_mail", map[string]any{"session_type": s.w.session.Type, "session_id": s.w.session.PublicID})
		states := map[string]string{}
		list, _ := mail.data["approvals"].([]any)
		for _, a := range list {
			a := a.(map[string]any)
			states[a["summary"].(string)] = a["state"].(string)
		}
		want := map[string]string{"npm publish": "allowed", "git push --force": "denied", "rm -rf build": "expired", "make deploy": "terminal"}
		for summary, state := range want {
			if states[summary] != state {
				t.Errorf("read_session_mail: %q is %q, want %q (%v)", summary, states[summary], state, states)
			}
		}
		events := m.agentCall(s.URL, "poll_resource_events", map[string]any{"resource_type": s.w.session.Type, "resource_id": s.w.session.PublicID, "after_sequence": 0})
		kinds := map[string]int{}
		list, _ = events.data["events"].([]any)
		for _, e := range list {
			kinds[e.(map[string]any)["kind"].(string)]++
		}
		if kinds["approval_requested"] < 4 || kinds["approval_decided"] < 4 {
			t.Errorf("poll_resource_events kinds %v", kinds)
		}
	})

	// Figures (OSFOUNDRY_MEASURE_APPROVALS=1): from an owner's click on the
	// other server process to the hook's exit with the verdict.
	t.Run("click to verdict", func(t *testing.T) {
		if os.Getenv("OSFOUNDRY_MEASURE_APPROVALS") != "1" {
			t.Skip("OSFOUNDRY_MEASURE_APPROVALS=1 measures it")
		}
		var took []time.Duration
		for i := range 40 {
			command := fmt.Sprintf("make release-%d", i)
			done := make(chan time.Time, 1)
			go func() {
				verdictOf(t, m.permissionRequest(s.URL, command))
				done <- time.Now()
			}()
			a := s.pendingApproval(t, command)
			click := ada.decision(page, a.ID, "allow", "")
			start := time.Now()
			if code, _ := click(); code != http.StatusOK {
				t.Fatalf("click: %d", code)
			}
			took = append(took, (<-done).Sub(start))
		}
		slices.Sort(took)
		t.Logf("owner's click → hook's verdict, %d runs: p50 %v, p99 %v, max %v", len(took), took[len(took)/2].Round(time.Millisecond),
			took[len(took)*99/100].Round(time.Millisecond), took[len(took)-1].Round(time.Millisecond))
	})

	t.Run("server down: no verdict within 2 s", func(t *testing.T) {
		s.silent.Store(true)
		defer s.silent.Store(false)
		r := m.permissionRequest(s.URL, "npm test")
		if behavior, _ := verdictOf(t, r); behavior != "" {
			t.Fatalf("verdict %q without a server", behavior)
		}
		t.Logf("the hook's answer with the server down: none, after %v", r.took.Round(time.Millisecond))
		if r.took > 2500*time.Millisecond {
			t.Errorf("the hook took %v with the server down", r.took)
		}
	})
}

// TestClaudeCodeAsksTheOwner drives the real Claude Code (`claude -p`, its
// model a scripted Messages API on loopback) in a checkout where
// `osfoundry agent install claude-code` wrote the hooks: a Bash call its
// settings do not allow runs once the owner allows it on the session page
// (the file appears), is refused with the owner's reason in the model's
// next request when denied, and is refused with nothing run when nobody
// answers within the wait. It runs when OSFOUNDRY_CLAUDE names a Claude
// Code binary.
func TestClaudeCodeAsksTheOwner(t *testing.T) {
	claude := claudeBinary()
	if claude == "" {
		t.Skip("no Claude Code binary: make node-deps installs it, or set OSFOUNDRY_CLAUDE")
	}
	t.Parallel()
	root, _ := filepath.Abs("../..")
	s := startAgentServer(t)
	m := newAgentMachine(t)
	s.connectAgent(t, m, "ada-claude")
	m.agentCall(s.URL, "post_session_note", map[string]any{"session_type": s.w.session.Type, "session_id": s.w.session.PublicID,
		"subject": "On the totals", "body": "Working.", "idempotency_key": "work-1"})
	ctx := context.Background()
	if err := s.w.st.SetProjectApprovalSettings(ctx, s.w.owner.WorkspaceID, s.w.session.ProjectID, store.ApprovalSettings{Enabled: true, WaitSeconds: 15}); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := m.run("", "agent", "install", "claude-code", "--server", s.URL, "--approval-wait", "15", "--absolute"); code != 0 {
		t.Fatalf("install: %s", stderr)
	}
	owner := s.owner(t)
	owner.signIn()
	page := fmt.Sprintf("/sessions/%d", s.w.session.ID)

	type run struct {
		Result  *string `json:"result"`
		IsError bool    `json:"is_error"`
		Exit    int     `json:"exit"`
		Stdout  string  `json:"stdout"`
		Stderr  string  `json:"stderr"`
	}
	cases := []struct{ name, command, verdict, reason string }{
		{"allowed", "echo hi > allowed.txt", "allow", ""},
		{"denied", "echo hi > denied.txt", "deny", "Use the staging bucket instead"},
		{"nobody answers", "echo hi > silent.txt", "", ""},
	}
	got := make([]run, len(cases))
	var wg sync.WaitGroup
	for i, c := range cases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command("node", filepath.Join(root, "e2e", "claude-permission.mjs"))
			cmd.Dir = root
			cmd.Env = append(m.env(), "CLAUDE="+claude, "CHECKOUT="+m.checkout, "COMMAND="+c.command)
			out, err := cmd.Output()
			if err != nil || json.Unmarshal(out, &got[i]) != nil {
				t.Errorf("%s: %v %s", c.name, err, out)
			}
		}()
		if c.verdict != "" {
			wg.Add(1)
			go func() {
				defer wg.Done()
				a := s.pendingApproval(t, c.command)
				if code, body := owner.decide(page, a.ID, c.verdict, c.reason); code != http.StatusOK {
					t.Errorf("%s: %d %s", c.name, code, body)
				}
			}()
		}
	}
	wg.Wait()
	exists := func(name string) bool { _, err := os.Stat(filepath.Join(m.checkout, name)); return err == nil }
	for i, c := range cases {
		g := got[i]
		result := "<none>"
		if g.Result != nil {
			result = *g.Result
		}
		t.Logf("%s: tool result %q (error %v), exit %d %s %s", c.name, result, g.IsError, g.Exit, g.Stdout, g.Stderr)
	}
	if !exists("allowed.txt") || got[0].IsError {
		t.Errorf("allowed: the command did not run")
	}
	if exists("denied.txt") || got[1].Result == nil || !strings.Contains(*got[1].Result, "Use the staging bucket instead") {
		t.Errorf("denied: the model's next request lacks the reason, or the command ran")
	}
	if exists("silent.txt") || got[2].Result == nil || !got[2].IsError {
		t.Errorf("nobody answers: want a refusal with nothing run")
	}
	as, _ := s.w.st.SessionApprovals(ctx, s.w.owner.WorkspaceID, s.w.session.ID, 10)
	states := map[string]string{}
	for _, a := range as {
		states[a.Summary] = a.State
	}
	if states[cases[0].command] != store.ApprovalAllowed || states[cases[1].command] != store.ApprovalDenied || states[cases[2].command] != store.ApprovalExpired {
		t.Errorf("states %v", states)
	}
}

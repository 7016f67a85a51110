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
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// responsesModel is a scripted OpenAI Responses API on loopback: the model
// behind Codex. Each request of the agent loop is kept (its body as sent)
// and answered by next; requests without tools (a title for the thread)
// get a short text.
type responsesModel struct {
	*httptest.Server
	mu    sync.Mutex
	turns []string
	next  func(body string, tools []responsesTool) responsesAction
}

// responsesTool is a function the request offered, in its namespace (Codex
// puts each MCP server's tools in one).
type responsesTool struct{ Namespace, Name string }

// responsesAction is one answer: a call of a tool, or a final text.
type responsesAction struct {
	Call *responsesTool
	Args map[string]any
	Text string
}

func startResponsesModel(t *testing.T, next func(body string, tools []responsesTool) responsesAction) *responsesModel {
	m := &responsesModel{next: next}
	m.Server = httptest.NewServer(http.HandlerFunc(m.serve))
	t.Cleanup(m.Close)
	return m
}

func (m *responsesModel) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if r.Method == http.MethodGet {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"object":"list","data":[{"id":"scripted-model","object":"model"}]}`)
		return
	}
	var req struct {
		Tools []struct {
			Type  string `json:"type"`
			Name  string `json:"name"`
			Tools []struct {
				Name string `json:"name"`
			} `json:"tools"`
		} `json:"tools"`
	}
	json.Unmarshal(body, &req)
	var tools []responsesTool
	for _, tl := range req.Tools {
		if tl.Type == "namespace" {
			for _, f := range tl.Tools {
				tools = append(tools, responsesTool{Namespace: tl.Name, Name: f.Name})
			}
		} else if tl.Name != "" {
			tools = append(tools, responsesTool{Name: tl.Name})
		}
	}
	a := responsesAction{Text: "Scripted."}
	if len(tools) > 0 {
		m.mu.Lock()
		m.turns = append(m.turns, string(body))
		m.mu.Unlock()
		a = m.next(string(body), tools)
	}
	item := map[string]any{"type": "message", "role": "assistant", "id": "msg_1", "content": []any{map[string]any{"type": "output_text", "text": a.Text, "annotations": []any{}}}}
	if a.Call != nil {
		args, _ := json.Marshal(a.Args)
		item = map[string]any{"type": "function_call", "id": "fc_1", "call_id": fmt.Sprintf("call_%d", len(m.turns)), "name": a.Call.Name, "arguments": string(args)}
		if a.Call.Namespace != "" {
			item["namespace"] = a.Call.Namespace
		}
	}
	usage := map[string]any{"input_tokens": 1, "input_tokens_details": nil, "output_tokens": 1, "output_tokens_details": nil, "total_tokens": 2}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range []map[string]any{
		{"type": "response.created", "response": map[string]any{"id": "resp_1"}},
		{"type": "response.output_item.done", "output_index": 0, "item": item},
		{"type": "response.completed", "response": map[string]any{"id": "resp_1", "usage": usage}},
	} {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", ev["type"], b)
	}
}

// codexBinary is the Codex CLI of the npm packages (package.json), or ""
// when they are not installed.
func codexBinary() string {
	root, _ := filepath.Abs("../..")
	p := filepath.Join(root, "node_modules", ".bin", "codex")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// claudeBinary is the Claude Code CLI the tests drive: OSFOUNDRY_CLAUDE
// when set, else the one of the npm packages (package.json), or "" when
// neither is there.
func claudeBinary() string {
	if p := os.Getenv("OSFOUNDRY_CLAUDE"); p != "" {
		return p
	}
	root, _ := filepath.Abs("../..")
	p := filepath.Join(root, "node_modules", ".bin", "claude")
	if _, err := os.Stat(p); err != nil {
		return ""
	}
	return p
}

// TestCodexWithInstalledHooks runs the real Codex CLI (`codex exec`, its
// model a scripted Responses API) in a checkout where `osfoundry agent
// install codex` wrote the bridge and the hooks: SessionStart reports the
// checkout's repository and branch from git and puts the owner's unread
// note into the model's context; a note that arrives during the turn makes
// the Stop hook keep the turn going once, with the note as what the model
// reads next.
func TestCodexWithInstalledHooks(t *testing.T) {
	codex := codexBinary()
	if codex == "" {
		t.Skip("the npm packages are not installed (make node-deps installs Codex)")
	}
	t.Parallel()
	s := startAgentServer(t)
	m := newAgentMachine(t)
	conn := s.connectAgent(t, m, "codex-bot")
	env := withPath(m.env(), filepath.Dir(binary(t)))
	ctx := context.Background()

	install := exec.Command(binary(t), "agent", "install", "codex", "--server", s.URL)
	install.Dir, install.Env = m.checkout, env
	if out, err := install.CombinedOutput(); err != nil || !strings.Contains(string(out), "+ hooks.Stop: osfoundry agent hook") {
		t.Fatalf("install codex: %v\n%s", err, out)
	}
	post := func(subject, body string) {
		t.Helper()
		if _, _, err := s.w.st.PostOwnerNote(ctx, store.OwnerNote{WorkspaceID: s.w.owner.WorkspaceID, SessionID: s.w.session.ID,
			OwnerID: s.w.owner.ID, Type: store.MessageNote, Subject: subject, Body: body}); err != nil {
			t.Error(err)
		}
	}
	post("Before you start", "The ledger rounds half-even: zebraquill.")

	// spooled waits until the bridge's relay has spooled the note with
	// subject, so the next hook event has it without the network.
	spooled := func(subject string) {
		t.Helper()
		if !waitFor(10*time.Second, func() bool {
			for _, n := range m.spool().Notes {
				if n.Note.Subject == subject {
					return true
				}
			}
			return false
		}) {
			t.Errorf("the note %q never reached the bridge's spool", subject)
		}
	}
	const mid = "Mind the rounding mode: crowfeather."
	const late = "Also update the changelog: ottermint."
	var midOnce, lateOnce sync.Once
	model := startResponsesModel(t, func(body string, tools []responsesTool) responsesAction {
		switch {
		case strings.Contains(body, "ottermint"):
			return responsesAction{Text: "Changelog noted; finished."}
		case !strings.Contains(body, `"function_call_output"`):
			// The first turn: the owner writes while the model works; the
			// hook after the tool call delivers it (PostToolUse).
			midOnce.Do(func() { post("While you work", mid); spooled("While you work") })
			for _, tl := range tools {
				if strings.Contains(tl.Namespace+tl.Name, "osfoundry") && strings.HasSuffix(tl.Name, "list_sessions") {
					return responsesAction{Call: &tl, Args: map[string]any{}}
				}
			}
			return responsesAction{Text: fmt.Sprintf("list_sessions was not offered: %v", tools)}
		}
		// After the last tool call the owner writes again: only the Stop
		// hook can still deliver it.
		lateOnce.Do(func() { post("One more thing", late); spooled("One more thing") })
		return responsesAction{Text: "Done."}
	})

	out, err := runCodex(t, codex, m, env, model)
	if err != nil {
		t.Fatalf("codex exec: %v\n%s", err, out)
	}

	model.mu.Lock()
	turns := model.turns
	model.mu.Unlock()
	if repo, branch, _ := s.status(t, conn); repo != "acme/widgets" || branch != "fix/rounding" {
		t.Errorf("status after SessionStart: repo %q branch %q", repo, branch)
	}
	if len(turns) == 0 || !strings.Contains(turns[0], "zebraquill") {
		t.Fatalf("the first model request lacks the owner's note of SessionStart:\n%.3000s\n%s", strings.Join(turns, "\n"), out)
	}
	// list_sessions (PostToolUse brings the note written meanwhile), then
	// "Done."; the Stop hook blocks with the late note; the model
	// finishes; the Stop after that lets the turn end.
	if len(turns) != 3 || !strings.Contains(turns[1], "crowfeather") || strings.Contains(turns[1], "ottermint") || !strings.Contains(turns[2], "ottermint") {
		for i, tr := range turns {
			t.Logf("request %d: %.2000s", i+1, tr)
		}
		t.Fatalf("want 3 model requests, the mid-turn note from the tool call on, the late note only in the last (the Stop hook's reason), got %d\n%s\n%s", len(turns), out, m.hookLog())
	}
	// The tool call went through the bridge as the login's connection.
	if !strings.Contains(turns[1], s.w.session.PublicID) {
		t.Errorf("the list_sessions result through the bridge lacks the session %s:\n%.2000s", s.w.session.PublicID, turns[1])
	}
	if i := strings.Index(turns[2], "ottermint"); i >= 0 {
		t.Logf("the last request carries: …%s…", turns[2][max(0, i-600):i+20])
	}
	if !strings.Contains(out, "Changelog noted; finished.") {
		t.Errorf("codex did not end with the model's last answer:\n%s", out)
	}
}

// runCodex runs `codex exec` in the machine's checkout, its model the
// scripted one, with a Codex home of the machine's own that trusts the
// checkout (so Codex reads its .codex/).
func runCodex(t *testing.T, codex string, m *agentMachine, env []string, model *responsesModel) (string, error) {
	t.Helper()
	return runCodexWith(t, codex, m, env, model, "List my sessions.")
}

// runCodexWith is runCodex with the prompt and the options of `codex exec`
// (before the prompt).
func runCodexWith(t *testing.T, codex string, m *agentMachine, env []string, model *responsesModel, prompt string, opts ...string) (string, error) {
	t.Helper()
	home := filepath.Join(m.root, "codex")
	os.MkdirAll(home, 0o700)
	config := fmt.Sprintf("model = %q\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\nname = \"Scripted model\"\nbase_url = %q\nwire_api = \"responses\"\n\n[projects.%q]\ntrust_level = \"trusted\"\n",
		"scripted-model", model.URL+"/v1", m.checkout)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	// Codex runs a hook only once the user trusted it (/hooks in the TUI);
	// a test has no one to ask.
	args := append(append([]string{"exec", "--dangerously-bypass-hook-trust"}, opts...), prompt)
	cmd := exec.Command(codex, args...)
	cmd.Dir, cmd.Env = m.checkout, append(env, "CODEX_HOME="+home, "NO_COLOR=1")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

package agent

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// mailServer stands in for /mcp with the unread hint every tool result
// carries, to pin how the hook pages through read_session_mail and what it
// keeps. The real server is exercised by the tests in cmd/osfoundry.
type mailServer struct {
	mu    sync.Mutex
	calls []string // "tool {arguments}"
	hint  *unreadHint
	pages map[string][][]mailNote // by session id; page n answers before_id of page n-1's last note
}

func (f *mailServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	json.NewDecoder(r.Body).Decode(&req)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, req.Params.Name+" "+string(req.Params.Arguments))
	var out map[string]any
	switch req.Params.Name {
	case "list_sessions", "set_status":
		out = map[string]any{"sessions": []any{}}
	case "read_session_mail":
		var a struct {
			SessionID string `json:"session_id"`
			BeforeID  int64  `json:"before_id"`
		}
		json.Unmarshal(req.Params.Arguments, &a)
		pages := f.pages[a.SessionID]
		i := 0
		for i < len(pages) && a.BeforeID != 0 && pages[i][0].ID >= a.BeforeID {
			i++
		}
		out = map[string]any{"notes": pages[i]}
		if i+1 < len(pages) {
			out["next_before_id"] = pages[i][len(pages[i])-1].ID
		}
	}
	if f.hint != nil {
		out["unread"] = f.hint
	}
	sc, _ := json.Marshal(out)
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": 1,
		"result": map[string]any{"content": []any{map[string]any{"type": "text", "text": string(sc)}}, "structuredContent": json.RawMessage(sc)}})
}

// note is a note of a page; forYou is what the server says of it (a reply
// to this connection, or an owner's note to the whole session).
func note(id int64, from, kind string, to *string, forYou bool, subject string) mailNote {
	return mailNote{ID: id, From: from, FromName: from, FromKind: kind, To: to, MessageType: "reply", Subject: subject, Body: subject + " body",
		CreatedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), ForYou: forYou}
}

// hookSetup is a checkout (not a git work tree) with fresh credentials for
// the fake server.
func hookSetup(t *testing.T, f *mailServer) (folders, string, string) {
	t.Helper()
	t.Setenv("CLAUDE_PROJECT_DIR", "")
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	root := t.TempDir()
	dirs := folders{Config: filepath.Join(root, "config"), State: filepath.Join(root, "state")}
	work, _ := filepath.EvalSymlinks(root)
	work = filepath.Join(work, "work")
	os.MkdirAll(work, 0o755)
	acct := account{dirs: dirs, server: srv.URL, checkout: work}
	err := acct.save(&credentials{Server: srv.URL, Checkout: work, Resource: srv.URL + "/mcp", TokenEndpoint: srv.URL + "/token",
		AccessToken: "t", ExpiresAt: time.Now().Add(time.Hour), RefreshToken: "r", SenderSlug: "ext-me"})
	if err != nil {
		t.Fatal(err)
	}
	return dirs, srv.URL, work
}

func event(name, cwd string) hookInput {
	return hookInput{SessionID: "s", Cwd: cwd, HookEventName: name}
}

func TestHookReadsTheNotesTheHintCounts(t *testing.T) {
	me, other := "ext-me", "ext-other"
	f := &mailServer{
		hint: &unreadHint{Total: 3, Sessions: []unreadSession{{"team_session", "s1", 2}, {"agent_session", "s2", 1}}},
		pages: map[string][][]mailNote{
			// s1: the agent's own notes sit between the unread ones and push
			// the second onto the next page.
			"s1": {
				{note(90, me, "outside assistant", nil, false, "mine 1"), note(89, "alice", "owner", &me, true, "reply one"), note(88, me, "outside assistant", &other, false, "my reply"),
					note(87, me, "outside assistant", nil, false, "mine 2"), note(86, me, "outside assistant", nil, false, "mine 3"), note(85, me, "outside assistant", nil, false, "mine 4"),
					note(84, me, "outside assistant", nil, false, "mine 5")},
				{note(83, "bob", "owner", nil, true, "to everyone"), note(82, "alice", "owner", &me, true, "old, read")},
			},
			"s2": {{note(95, other, "outside assistant", &me, true, "agent reply"), note(94, other, "outside assistant", nil, false, "agent to all")}},
		},
	}
	dirs, server, work := hookSetup(t, f)
	text, err := runEvent(context.Background(), dirs, server, event("UserPromptSubmit", work), time.Now)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"3 unread notes", "note 89", "reply one", "note 83", "to everyone", "note 95", "agent reply"} {
		if !strings.Contains(text, want) {
			t.Errorf("context lacks %q:\n%s", want, text)
		}
	}
	for _, not := range []string{"mine", "my reply", "old, read", "agent to all"} {
		if strings.Contains(text, not) {
			t.Errorf("context has %q:\n%s", not, text)
		}
	}
	calls := strings.Join(f.calls, "\n")
	if !strings.HasPrefix(calls, "list_sessions {}") || strings.Count(calls, "read_session_mail") != 3 || !strings.Contains(calls, `"before_id":84`) {
		t.Errorf("calls:\n%s", calls)
	}

	// Within 30 s the next prompt asks nothing; SessionStart is not throttled.
	f.calls = nil
	text, err = runEvent(context.Background(), dirs, server, event("PostToolUse", work), time.Now)
	if err != nil || text != "" || len(f.calls) != 0 {
		t.Errorf("throttled run: %q %v %v", text, err, f.calls)
	}
	_, err = runEvent(context.Background(), dirs, server, event("PostToolUse", work),
		func() time.Time { return time.Now().Add(mailEvery) })
	if err != nil || len(f.calls) != 1+3 {
		t.Errorf("30 s later: %v %v", err, f.calls)
	}
	f.calls, f.hint = nil, nil
	text, err = runEvent(context.Background(), dirs, server, event("SessionStart", work), time.Now)
	if err != nil || text != "" || len(f.calls) != 1 || !strings.HasPrefix(f.calls[0], `set_status {"branch":null,"repo":"work"}`) {
		t.Errorf("SessionStart outside git: %q %v %v", text, err, f.calls)
	}
}

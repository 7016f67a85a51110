package handlers

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/osfoundry/osfoundry/store"
)

// agentRequest sends a JSON request to the agent endpoints with ag's token.
func (a *testApp) agentRequest(ag agent, method, path, body string) (int, map[string]any) {
	a.t.Helper()
	req, _ := http.NewRequest(method, a.srv.URL+path, strings.NewReader(body))
	if ag.token != "" {
		req.Header.Set("Authorization", "Bearer "+ag.token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatal(err)
	}
	defer res.Body.Close()
	var out map[string]any
	json.NewDecoder(res.Body).Decode(&out)
	return res.StatusCode, out
}

// TestApprovalThroughTheRouter: the hook's endpoints take only a valid
// token and validate what they get; the approval shows on its session page
// and in the inbox, escaped; Allow from the page reaches a waiting long
// poll; a later click is refused naming who decided; another workspace's
// owner finds nothing.
func TestApprovalThroughTheRouter(t *testing.T) {
	t.Parallel()
	f := newSessionFixture(t)
	f.app.agentNote(f.ag, f.session.ID, "Working", "On it.")

	if code, _ := f.app.agentRequest(agent{}, http.MethodPost, "/agent/approvals", `{"tool":"Bash"}`); code != http.StatusUnauthorized {
		t.Fatalf("no token: %d", code)
	}
	if code, out := f.app.agentRequest(f.ag, http.MethodPost, "/agent/approvals", `{"tool":"","summary":"x"}`); code != http.StatusUnprocessableEntity || out["field"] != "tool" {
		t.Fatalf("no tool: %d %v", code, out)
	}
	code, out := f.app.agentRequest(f.ag, http.MethodPost, "/agent/approvals", `{"tool":"Bash","summary":"rm -rf <b>x</b>\nok","repo":"acme/site","branch":"main"}`)
	if code != http.StatusCreated || out["state"] != "pending" || out["wait_seconds"].(float64) < 100 {
		t.Fatalf("create: %d %v", code, out)
	}
	id := int64(out["id"].(float64))

	doc := f.alice.doc(f.alice.get(f.url), http.StatusOK)
	box := doc.Find(fmt.Sprintf(`[data-approval-id="%d"]`, id))
	if box.AttrOr("data-state", "") != "pending" || box.Find(`[data-testid="approval-summary"]`).Text() != "rm -rf <b>x</b> ok" ||
		box.Find("b").Length() != 0 || box.Find(`[data-testid="approval-allow"]`).Length() != 1 {
		h, _ := box.Html()
		t.Fatalf("the session page's approval: %s", h)
	}
	inbox := f.alice.doc(f.alice.get("/inbox"), http.StatusOK)
	if inbox.Find(fmt.Sprintf(`#approvals [data-approval-id="%d"]`, id)).Length() != 1 {
		t.Fatal("the inbox's Needs you lacks the approval")
	}

	// A long poll waiting when the owner allows.
	waited := make(chan map[string]any, 1)
	go func() {
		_, out := f.app.agentRequest(f.ag, http.MethodGet, fmt.Sprintf("/agent/approvals/%d?wait=30", id), "")
		waited <- out
	}()
	f.alice.doc(f.alice.postHTMX(fmt.Sprintf("/approvals/%d/decide", id), url.Values{"verdict": {"allow"}}), http.StatusOK)
	select {
	case got := <-waited:
		if got["state"] != "allowed" || got["decided_by"] != f.alice.owner.DisplayName {
			t.Fatalf("the long poll: %v", got)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the long poll did not hear the decision")
	}
	later := f.alice.doc(f.alice.postHTMX(fmt.Sprintf("/approvals/%d/decide", id), url.Values{"verdict": {"deny"}}), http.StatusConflict)
	if n := later.Find(`[data-testid="approval-notice"]`).Text(); n != f.alice.owner.DisplayName+" allowed this already" {
		t.Errorf("the later click: %q", n)
	}
	f.alice.doc(f.alice.postHTMX(fmt.Sprintf("/approvals/%d/decide", id), url.Values{"verdict": {"maybe"}}), http.StatusUnprocessableEntity)
	bob := f.app.owner("bob@example.com", "Bob's")
	bob.doc(bob.postHTMX(fmt.Sprintf("/approvals/%d/decide", id), url.Values{"verdict": {"allow"}}), http.StatusNotFound)
	if code, _ := f.app.agentRequest(f.ag, http.MethodGet, fmt.Sprintf("/agent/approvals/%d?wait=0", id+100), ""); code != http.StatusNotFound {
		t.Errorf("another approval: %d", code)
	}

	// The project's settings.
	page := fmt.Sprintf("/projects/%d", f.p.ID)
	res := f.alice.post(page+"/approvals", url.Values{"wait_seconds": {"30"}, "delay_minutes": {"5"}})
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("save: %d", res.StatusCode)
	}
	want := store.ApprovalSettings{Enabled: false, WaitSeconds: 30, DelayMinutes: 5}
	if got, err := f.app.store.ProjectApprovalSettings(context.Background(), f.alice.owner.WorkspaceID, f.p.ID); err != nil || got != want {
		t.Fatalf("saved %+v (%v)", got, err)
	}
	d := f.alice.doc(f.alice.post(page+"/approvals", url.Values{"enabled": {"on"}, "wait_seconds": {"5"}, "delay_minutes": {"x"}}), http.StatusUnprocessableEntity)
	for field, msg := range map[string]string{"wait_seconds": "use 10 to 600 seconds", "delay_minutes": "enter a whole number"} {
		if got := d.Find(`[data-testid="error-` + field + `"]`).Text(); got != msg {
			t.Errorf("%s: error %q, want %q", field, got, msg)
		}
	}
	if code, out := f.app.agentRequest(f.ag, http.MethodPost, "/agent/approvals", `{"tool":"Bash"}`); code != http.StatusOK || out["state"] != "off" {
		t.Errorf("approvals off: %d %v", code, out)
	}
}

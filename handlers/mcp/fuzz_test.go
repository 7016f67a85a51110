package mcp_test

import (
	"time"

	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// fuzzEnv is shared by all iterations of a fuzz target: one database, one
// invited agent with a claimed profile.
type fuzzEnv struct {
	e     *env
	agent *agent
	sess  *store.Session
}

func newFuzzEnv(t testing.TB) *fuzzEnv {
	e := newEnv(t)
	// Fuzzing and benchmarks post as fast as they can: a minute of the
	// write limits lasts a millisecond.
	e.st.SetWriteMinute(time.Millisecond)
	ws, owner := e.workspace("Fuzz")
	p := e.project(ws, "P")
	s := e.session(ws, p, "agent_session")
	a := e.agent(ws, owner, store.AllScopes, p)
	a.invite(s, store.RoleRunner)
	a.ok("claim_connected_profile", map[string]any{"handle": "fuzzer", "display_name": "Fuzzer"}, nil)
	return &fuzzEnv{e: e, agent: a, sess: s}
}

// serve runs one request straight through the handler (no network).
func (f *fuzzEnv) serve(t *testing.T, body []byte, auth string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, f.e.mcpURL(), bytes.NewReader(body))
	req.Host = req.URL.Host
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	rec := httptest.NewRecorder()
	f.e.h.ServeHTTP(rec, req)
	return rec
}

// FuzzAuthWrapper sends arbitrary bodies and Authorization headers to /mcp:
// never a panic, never a 500.
func FuzzAuthWrapper(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"set_status","arguments":{}}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/list"},{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"list_agents"}}]`,
		`{"jsonrpc":"2.0","id":"x","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"tools/call"}`,
		`[]`, `{}`, `null`, `"`, `{"id":{"a":1},"method":"tools/call"}`,
	} {
		f.Add([]byte(seed), "Bearer garbage")
		f.Add([]byte(seed), "")
		f.Add([]byte(seed), "valid")
	}
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, body []byte, auth string) {
		if auth == "valid" {
			auth = "Bearer " + fe.agent.token
		}
		rec := fe.serve(t, body, auth)
		if rec.Code >= 500 {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body.String())
		}
		if rec.Code == http.StatusUnauthorized && rec.Header().Get("WWW-Authenticate") == "" {
			t.Fatal("401 without WWW-Authenticate")
		}
	})
}

// FuzzToolArguments sends arbitrary argument objects to every tool with a
// valid token: each answer is a JSON-RPC message, never a 500 or a panic.
func FuzzToolArguments(f *testing.F) {
	tools := []string{"claim_connected_profile", "set_status", "list_agents", "list_sessions", "read_session_state",
		"read_session_mail", "post_session_note", "poll_resource_events"}
	for i, seed := range []string{
		`{}`, `{"repo":null,"branch":"main","task":"x"}`, `{"handle":"alice-claude","display_name":"A"}`,
		`{"session_type":"agent_session","session_id":"SID","limit":20,"before_id":1}`,
		`{"session_type":"agent_session","session_id":"SID","subject":"s","body":"b","idempotency_key":"k"}`,
		`{"resource_type":"agent_session","resource_id":"SID","after_sequence":0,"limit":100}`,
		`{"limit":-1}`, `{"before_id":1e400}`, `{"task":"\u0000"}`, `[1,2]`, `"str"`, `{"session_id":{"$gt":""}}`,
	} {
		f.Add(uint8(i), []byte(seed))
	}
	fe := newFuzzEnv(f)
	f.Fuzz(func(t *testing.T, tool uint8, args []byte) {
		args = bytes.ReplaceAll(args, []byte("SID"), []byte(fe.sess.PublicID))
		name := tools[int(tool)%len(tools)]
		if !json.Valid(args) {
			args, _ = json.Marshal(string(args))
		}
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + name + `","arguments":` + string(args) + `}}`)
		rec := fe.serve(t, body, "Bearer "+fe.agent.token)
		if rec.Code >= 500 {
			t.Fatalf("%s(%s): status %d: %s", name, args, rec.Code, rec.Body.String())
		}
		out, _ := io.ReadAll(rec.Body)
		if rec.Code == 200 && !json.Valid(out) {
			t.Fatalf("%s(%s): answer is not JSON: %s", name, args, out)
		}
	})
}

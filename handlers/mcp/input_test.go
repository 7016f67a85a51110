package mcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/osfoundry/osfoundry/store"
)

// post sends a raw JSON-RPC body with the agent's token.
func (a *agent) post(body string, query string) (int, string) {
	a.e.t.Helper()
	req, _ := http.NewRequest(http.MethodPost, a.e.mcpURL()+query, bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+a.token)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		a.e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func TestHostileInputIsRefusedClearly(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ws, owner := e.workspace("W")
	p := e.project(ws, "P")
	s := e.session(ws, p, "team_session")
	a := e.agent(ws, owner, store.AllScopes, p)
	a.invite(s, store.RoleContributor)
	a.ok("claim_connected_profile", map[string]any{"handle": "alice", "display_name": "Alice"}, nil)

	call := func(tool, args string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":` + args + `}}`
	}
	post := func(subject string) string {
		return call("post_session_note", `{"session_type":"team_session","session_id":"`+s.PublicID+`","subject":`+subject+`,"body":"b","idempotency_key":"k"}`)
	}
	tests := []struct {
		name, body, query string
		status            int
		want              string
	}{
		{"NUL in a string", post(`"a\u0000b"`), "", 200, "subject: contains invalid UTF-8 or a NUL"},
		{"invalid UTF-8", post("\"a\xff\xfeb\""), "", 200, "subject: contains invalid UTF-8"},
		{"NUL in set_status task", call("set_status", `{"task":"x\u0000"}`), "", 200, "task: contains"},
		{"deep nesting", call("set_status", strings.Repeat("[", 200)+strings.Repeat("]", 200)), "", 400, "nested deeper than 64"},
		{"token in query string", call("set_status", `{}`), "?access_token=" + a.token, 400, "not accepted"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			status, body := a.post(tc.body, tc.query)
			if status != tc.status || !strings.Contains(body, tc.want) {
				t.Fatalf("%d %s; want %d containing %q", status, body, tc.status, tc.want)
			}
			if tc.status == 200 {
				var msg struct {
					Result struct {
						IsError bool `json:"isError"`
					} `json:"result"`
				}
				if json.Unmarshal([]byte(body), &msg) != nil || !msg.Result.IsError {
					t.Fatalf("want an isError tool result: %s", body)
				}
			}
		})
	}
	var notes int
	e.sql().QueryRow(`SELECT count(*) FROM notes`).Scan(&notes)
	if notes != 0 {
		t.Fatalf("%d notes written from hostile input", notes)
	}
	big := call("set_status", `{"task":"`+strings.Repeat("x", 1<<20)+`"}`)
	if status, _ := a.post(big, ""); status != http.StatusRequestEntityTooLarge {
		t.Fatalf("1 MiB+ body: %d, want 413", status)
	}
}

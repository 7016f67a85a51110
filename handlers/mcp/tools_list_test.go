package mcp_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/osfoundry/osfoundry/store"
)

// liveToolsList fetches tools/list anonymously over HTTP and returns the
// JSON-RPC result exactly as sent.
func liveToolsList(t *testing.T, e *env) json.RawMessage {
	t.Helper()
	resp, body := e.rpc("", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "Mcp-Protocol-Version", "2025-11-25")
	if resp.StatusCode != 200 {
		t.Fatalf("tools/list: %d %s", resp.StatusCode, body)
	}
	var msg struct {
		Result json.RawMessage `json:"result"`
	}
	if err := json.Unmarshal(body, &msg); err != nil || msg.Result == nil {
		t.Fatalf("tools/list: %v %s", err, body)
	}
	return msg.Result
}

type liveTool struct {
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	InputSchema     json.RawMessage `json:"inputSchema"`
	SecuritySchemes []struct {
		Type   string   `json:"type"`
		Scopes []string `json:"scopes"`
	} `json:"securitySchemes"`
	Meta struct {
		SecuritySchemes json.RawMessage `json:"securitySchemes"`
	} `json:"_meta"`
	Annotations map[string]any `json:"annotations"`
}

func liveTools(t *testing.T, e *env) (map[string]liveTool, map[string]json.RawMessage) {
	t.Helper()
	var res struct {
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(liveToolsList(t, e), &res); err != nil {
		t.Fatal(err)
	}
	tools, raw := map[string]liveTool{}, map[string]json.RawMessage{}
	for _, r := range res.Tools {
		var lt liveTool
		if err := json.Unmarshal(r, &lt); err != nil {
			t.Fatal(err)
		}
		tools[lt.Name], raw[lt.Name] = lt, r
	}
	return tools, raw
}

// TestToolsListGolden compares the whole tools/list result with
// testdata/tools_list.json. Regenerate with UPDATE_GOLDEN=1.
func TestToolsListGolden(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, liveToolsList(t, e), "", "  "); err != nil {
		t.Fatal(err)
	}
	pretty.WriteByte('\n')
	path := filepath.Join("testdata", "tools_list.json")
	if os.Getenv("UPDATE_GOLDEN") != "" {
		if err := os.WriteFile(path, pretty.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with UPDATE_GOLDEN=1 to create it)", err)
	}
	if !bytes.Equal(want, pretty.Bytes()) {
		t.Fatalf("tools/list differs from %s; if the change is intended, run UPDATE_GOLDEN=1 go test ./handlers/mcp/\n%s", path, pretty.String())
	}
}

// TestToolDefinitions checks what every tool must carry: the ten names,
// Draft 2020-12 object schemas closed with additionalProperties false,
// annotations with the documented hints (destructiveHint false on a write), a top-level securitySchemes with the
// tool's scope mirrored in _meta, and a short description. It logs the
// serialized size of each definition and of the whole list.
func TestToolDefinitions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tools, raw := liveTools(t, e)
	want := []struct {
		name      string
		scope     string
		readOnly  bool
		openWorld bool
	}{
		{"claim_connected_profile", store.ScopeWrite, false, false},
		{"set_status", store.ScopeWrite, false, false},
		{"list_agents", store.ScopeRead, true, false},
		{"list_sessions", store.ScopeRead, true, false},
		{"read_session_state", store.ScopeRead, true, false},
		{"read_session_mail", store.ScopeRead, true, false},
		{"post_session_note", store.ScopeWrite, false, true},
		{"reply_to_sender", store.ScopeWrite, false, true},
		{"poll_resource_events", store.ScopeRead, true, false},
		{"ask_owner", store.ScopeWrite, false, true},
	}
	if len(tools) != len(want) {
		t.Fatalf("got %d tools, want %d", len(tools), len(want))
	}
	total := 0
	for _, w := range want {
		lt, ok := tools[w.name]
		if !ok {
			t.Errorf("missing tool %s", w.name)
			continue
		}
		var schema map[string]any
		if err := json.Unmarshal(lt.InputSchema, &schema); err != nil {
			t.Fatal(err)
		}
		if schema["type"] != "object" || schema["additionalProperties"] != false {
			t.Errorf("%s: schema must be a closed object: %s", w.name, lt.InputSchema)
		}
		if lt.Annotations["readOnlyHint"] != w.readOnly || lt.Annotations["openWorldHint"] != w.openWorld {
			t.Errorf("%s: annotations %v, want readOnlyHint %v openWorldHint %v", w.name, lt.Annotations, w.readOnly, w.openWorld)
		}
		// Codex asks before a write whose destructiveHint is not false.
		if !w.readOnly && lt.Annotations["destructiveHint"] != false {
			t.Errorf("%s: annotations %v, want destructiveHint false", w.name, lt.Annotations)
		}
		if len(lt.SecuritySchemes) != 1 || lt.SecuritySchemes[0].Type != "oauth2" || !slices.Equal(lt.SecuritySchemes[0].Scopes, []string{w.scope}) {
			t.Errorf("%s: securitySchemes %+v, want oauth2 [%s]", w.name, lt.SecuritySchemes, w.scope)
		}
		if top, _ := json.Marshal(lt.SecuritySchemes); string(top) != string(lt.Meta.SecuritySchemes) {
			t.Errorf("%s: _meta.securitySchemes %s does not mirror %s", w.name, lt.Meta.SecuritySchemes, top)
		}
		if n := len(lt.Description); n == 0 || n > 450 {
			t.Errorf("%s: description of %d bytes; keep it short", w.name, n)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, raw[w.name])
		total += compact.Len()
		t.Logf("size %-24s %5d bytes", w.name, compact.Len())
	}
	var list bytes.Buffer
	_ = json.Compact(&list, liveToolsList(t, e))
	t.Logf("size %-24s %5d bytes (tools alone: %d)", "tools/list result", list.Len(), total)
	if list.Len() > 8192 {
		t.Errorf("tools/list is %d bytes; keep it under 8 KiB", list.Len())
	}
}

// TestDescriptionsCarryTheRules: however short, the descriptions keep the
// rules an agent needs (who sees it, partial update, null clears, claim
// first, order of results, retry with the same key, whom a reply goes to,
// what clears the unread hint). A rule several tools share is said once, by
// the tool it belongs to: claim first by claim_connected_profile, invited
// sessions only by list_sessions, the same key by post_session_note, whose
// kind reply_to_sender is.
func TestDescriptionsCarryTheRules(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tools, _ := liveTools(t, e)
	for name, phrases := range map[string][]string{
		"claim_connected_profile": {"unique in your workspace", "once, before any tool that writes", "again to update"},
		"set_status":              {"per-step progress", "sharing a project with you", "never workspace-wide", "Omitted fields keep their value", "null clears"},
		"list_agents":             {"presence", "self-reported", "only for agents sharing a project with you"},
		"list_sessions":           {"invited", "newest first", "the session tools work only in these"},
		"read_session_state":      {"your role", "participants with presence", "last_sequence"},
		"read_session_mail":       {"to you, to all and from you", "newest first", "next_before_id", "until an id you have seen", "clears unread"},
		"post_session_note":       {"what a person must read", "owners and participants", "same key"},
		"reply_to_sender":         {"post_session_note to one sender", "a from of read_session_mail", "seen by them and the owners"},
		"poll_resource_events":    {"after after_sequence", "oldest first", "next_sequence", "read_session_state's last_sequence"},
		"ask_owner":               {"session's owners", "no options: free text", "no decision yet", "comes later as mail"},
	} {
		for _, p := range phrases {
			if !strings.Contains(tools[name].Description, p) {
				t.Errorf("%s: description %q lacks %q", name, tools[name].Description, p)
			}
		}
	}
}

// TestSchemaConformance runs argument sets through a JSON Schema validator
// against the live tools/list schemas, and asserts that the server itself
// answers each rejected set with an isError result naming the problem.
func TestSchemaConformance(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tools, _ := liveTools(t, e)
	schemas := map[string]*jsonschema.Schema{}
	for name, lt := range tools {
		doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(lt.InputSchema))
		if err != nil {
			t.Fatal(err)
		}
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource("mem://"+name+".json", doc); err != nil {
			t.Fatal(err)
		}
		if schemas[name], err = c.Compile("mem://" + name + ".json"); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	ws, owner := e.workspace("W")
	a := e.agent(ws, owner, store.AllScopes)
	note := func(subject, body string, key bool) map[string]any {
		m := map[string]any{"session_type": "team_session", "session_id": "s1", "subject": subject, "body": body}
		if key {
			m["idempotency_key"] = "k1"
		}
		return m
	}
	cases := []struct {
		name   string
		tool   string
		args   map[string]any
		ok     bool
		reason string // what the server's refusal must mention
	}{
		{"status empty", "set_status", map[string]any{}, true, ""},
		{"task 280", "set_status", map[string]any{"task": strings.Repeat("t", 280)}, true, ""},
		{"task 281", "set_status", map[string]any{"task": strings.Repeat("t", 281)}, false, "task: too long"},
		{"branch null", "set_status", map[string]any{"branch": nil}, true, ""},
		{"extra session_id", "set_status", map[string]any{"task": "x", "session_id": "s1"}, false, `unexpected properties ["session_id"]`},
		{"extra state", "set_status", map[string]any{"state": "busy"}, false, `unexpected properties ["state"]`},
		{"handle ok", "claim_connected_profile", map[string]any{"handle": "alice-claude", "display_name": "Alice"}, true, ""},
		{"handle Alice", "claim_connected_profile", map[string]any{"handle": "Alice", "display_name": "Alice"}, false, "handle: must match the pattern"},
		{"claim no display_name", "claim_connected_profile", map[string]any{"handle": "alice-claude"}, false, `missing required properties ["display_name"]`},
		{"post 200+10000", "post_session_note", note(strings.Repeat("s", 200), strings.Repeat("b", 10000), true), true, ""},
		{"subject 201", "post_session_note", note(strings.Repeat("s", 201), "b", true), false, "subject: too long"},
		{"post no key", "post_session_note", note("s", "b", false), false, `missing required properties ["idempotency_key"]`},
		{"mail before_id limit 20", "read_session_mail", map[string]any{"session_type": "team_session", "session_id": "s1", "before_id": 5, "limit": 20}, true, ""},
		{"mail after_id", "read_session_mail", map[string]any{"session_type": "team_session", "session_id": "s1", "after_id": 5}, false, `unexpected properties ["after_id"]`},
		{"ask ok", "ask_owner", map[string]any{"session_type": "team_session", "session_id": "s1", "question": "Which?", "options": []string{"A", "B"}, "urgency": "blocking", "wait_seconds": 600, "idempotency_key": "k"}, true, ""},
		{"ask six options", "ask_owner", map[string]any{"session_type": "team_session", "session_id": "s1", "question": "Which?", "options": []string{"1", "2", "3", "4", "5", "6"}, "idempotency_key": "k"}, false, "options: too many: 6 items, at most 5"},
		{"ask option 81", "ask_owner", map[string]any{"session_type": "team_session", "session_id": "s1", "question": "Which?", "options": []string{strings.Repeat("o", 81)}, "idempotency_key": "k"}, false, "options.0: too long: 81 characters, at most 80"},
		{"ask empty question", "ask_owner", map[string]any{"session_type": "team_session", "session_id": "s1", "question": "", "idempotency_key": "k"}, false, "question: too short"},
		{"ask wait 601", "ask_owner", map[string]any{"session_type": "team_session", "session_id": "s1", "question": "q", "wait_seconds": 601, "idempotency_key": "k"}, false, "wait_seconds: must be at most 600"},
		{"ask urgent", "ask_owner", map[string]any{"session_type": "team_session", "session_id": "s1", "question": "q", "urgency": "urgent", "idempotency_key": "k"}, false, `urgency: must be one of "normal", "blocking"`},
		{"state graph_session", "read_session_state", map[string]any{"session_type": "graph_session", "session_id": "s1"}, false, `session_type: must be one of "agent_session", "team_session", "loop_session"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			inst, err := jsonschema.UnmarshalJSON(strings.NewReader(mustJSON(c.args)))
			if err != nil {
				t.Fatal(err)
			}
			err = schemas[c.tool].Validate(inst)
			if c.ok && err != nil {
				t.Fatalf("validator rejected %s: %v", mustJSON(c.args), err)
			}
			if !c.ok {
				if err == nil {
					t.Fatalf("validator accepted %s", mustJSON(c.args))
				}
				msg := a.refused(c.tool, c.args)
				if !strings.Contains(msg, c.reason) || !strings.HasPrefix(msg, "Invalid arguments: ") {
					t.Fatalf("server refusal %q does not name %q", msg, c.reason)
				}
			}
		})
	}
}

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/osfoundry/osfoundry/store"
)

// TestToolErrorMapping: problems an agent can fix become refusals naming the
// rule; anything else becomes an opaque JSON-RPC internal error.
func TestToolErrorMapping(t *testing.T) {
	t.Parallel()
	h := New(Options{BaseURL: "http://localhost:8080"})
	ctx := context.Background()
	for _, c := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("store: set status: %w", store.ErrNoProfile), msgClaimFirst},
		{fmt.Errorf("store: read mail: %w", store.ErrForbidden), msgNotInvited},
		{fmt.Errorf("store: read mail: %w", store.ErrNotFound), msgNoSession},
		{store.ErrKeyReused, "idempotency_key: already used for a different note"},
		{&store.FieldError{Field: "limit", Message: "use 1 to 20"}, "limit: use 1 to 20"},
		{refusal("handle taken: x"), "handle taken: x"},
	} {
		got := h.toolError(ctx, "t", c.err)
		var r refusal
		if !errors.As(got, &r) || !strings.HasPrefix(string(r), c.want) {
			t.Errorf("%v → %v, want refusal %q", c.err, got, c.want)
		}
	}
	got := h.toolError(ctx, "t", errors.New(`store: post note: ERROR: relation "notes" does not exist (SQLSTATE 42P01)`))
	var we *jsonrpc.Error
	if !errors.As(got, &we) || we.Code != jsonrpc.CodeInternalError || we.Message != "internal error" {
		t.Fatalf("infrastructure error → %#v", got)
	}
}

// TestArgumentViolations: each schema violation is worded from the
// validator's structured result as the argument and the rule it broke,
// without echoing long values back.
func TestArgumentViolations(t *testing.T) {
	t.Parallel()
	status := compileArguments("set_status", setStatusSchema.raw())
	claim := compileArguments("claim_connected_profile", claimConnectedProfileSchema.raw())
	note := compileArguments("post_session_note", postSessionNoteSchema.raw())
	mail := compileArguments("read_session_mail", readSessionMailSchema.raw())
	poll := compileArguments("poll_resource_events", pollResourceEventsSchema.raw())
	long := strings.Repeat("t", 281)
	for _, c := range []struct {
		schema *argumentsSchema
		args   string
		want   string
	}{
		{status, `{}`, ""},
		{status, ``, ""},
		{status, `{"task":null,"repo":"r"}`, ""},
		{status, `{"task":"` + long + `"}`, "Invalid arguments: task: too long: 281 characters, at most 280"},
		{status, `{"task":"é` + long[1:] + `"}`, "Invalid arguments: task: too long: 281 characters, at most 280"},
		{status, `{"state":"busy"}`, `Invalid arguments: unexpected properties ["state"] (not in the schema; remove them)`},
		{status, `{"task":5}`, "Invalid arguments: task: must be a string or null, not a number"},
		{status, `[]`, "Invalid arguments: must be an object, not an array"},
		{claim, `{"handle":"Alice","display_name":"A"}`, `Invalid arguments: handle: must match the pattern "^[a-z0-9][a-z0-9-]{1,30}$"`},
		{claim, `{"handle":"alice","display_name":""}`, "Invalid arguments: display_name: too short: 0 characters, at least 1"},
		{claim, `{"handle":"alice"}`, `Invalid arguments: missing required properties ["display_name"]`},
		{note, `{"session_type":"graph_session","session_id":"s","subject":"` + strings.Repeat("s", 201) + `","body":"b"}`,
			`Invalid arguments: missing required properties ["idempotency_key"]; session_type: must be one of "agent_session", "team_session", "loop_session"; subject: too long: 201 characters, at most 200`},
		{mail, `{"session_type":"team_session","session_id":"s","limit":21}`, "Invalid arguments: limit: must be at most 20"},
		{mail, `{"session_type":"team_session","session_id":"s","before_id":0}`, "Invalid arguments: before_id: must be at least 1"},
		{mail, `{"session_type":"team_session","session_id":"s","before_id":1.5}`, "Invalid arguments: before_id: must be an integer, not a number"},
		{poll, `{"resource_type":"team_session","resource_id":"s","after_sequence":-1}`, "Invalid arguments: after_sequence: must be at least 0"},
	} {
		if got := c.schema.check(json.RawMessage(c.args)); got != c.want {
			t.Errorf("%.80s\n got %q\nwant %q", c.args, got, c.want)
		}
	}
}

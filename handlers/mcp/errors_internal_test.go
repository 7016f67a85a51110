package mcp

import (
	"context"
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

func TestTidyValidation(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`validating "arguments": validating root: validating /properties/task: maxLength: "ttt" contains 281 Unicode code points, more than 280`:   "Invalid arguments: task: too long: 281 characters, at most 280",
		`validating "arguments": validating root: validating /properties/display_name: minLength: "" contains 0 Unicode code points, fewer than 1`: "Invalid arguments: display_name: too short: 0 characters, at least 1",
		`validating "arguments": validating root: unexpected additional properties ["state"]`:                                                      `Invalid arguments: unexpected properties ["state"] (not in the schema; remove them)`,
		`validating "arguments": validating root: required: missing properties: ["body"]`:                                                          `Invalid arguments: missing required properties ["body"]`,
		`validating "arguments": validating root: validating /properties/limit: maximum: 21 is greater than 20.000000`:                             "Invalid arguments: limit: maximum: 21 is greater than 20.000000",
	} {
		if got, ok := tidyValidation(in); !ok || got != want {
			t.Errorf("%s\n got %q\nwant %q", in, got, want)
		}
	}
	if _, ok := tidyValidation("session not found"); ok {
		t.Error("rewrote a message that is not a schema violation")
	}
}

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"

	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestGoSDKClientMatrix is the go-sdk row of the client matrix (the e2e
// specs client-*.spec.ts run the same steps with the other clients): the
// go-sdk client with its OAuth handler (auth.AuthorizationCodeHandler on
// StreamableClientTransport.OAuthHandler) against the real server binary.
//
//	list        anonymous initialize + tools/list
//	sign-in     the first tool call is a read tool (list_sessions); it sends
//	            the owner to the consent page, and the call then answers
//	step-up     the first write tool after that read-first sign-in works
//	every tool  every tool the server lists, the writes in a session the
//	            connection is invited to through the web app, a reply to
//	            the owner's note there
//	revoke      the owner revokes the connection on the Connections page; the
//	            client's next call starts a new authorization that succeeds
//
// The owner is an HTTP client carrying the owner's cookie: it signs in,
// approves the consent page and hands the redirect's code, state and iss back
// to the handler, as the host's loopback listener would.
func TestGoSDKClientMatrix(t *testing.T) {
	t.Parallel()
	dsn := storetest.NewDatabase(t)
	r := startReplica(t, dsn, "")
	r.waitReady()
	w := newWorld(t, dsn, r.URL, 0)
	o := newOwnerBrowser(t, r.URL, w)

	const clientName = "Matrix go-sdk"
	const redirect = "http://127.0.0.1:54321/callback"
	var scopesAsked []string // the scope of each authorization the handler started
	handler, err := auth.NewAuthorizationCodeHandler(&auth.AuthorizationCodeHandlerConfig{
		DynamicClientRegistrationConfig: &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			ClientName:              clientName,
			RedirectURIs:            []string{redirect},
			TokenEndpointAuthMethod: "none",
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
		}},
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			if u, err := url.Parse(args.URL); err == nil {
				scopesAsked = append(scopesAsked, u.Query().Get("scope"))
			}
			back, err := o.approve(args.URL)
			if err != nil {
				return nil, err
			}
			q := back.Query()
			if q.Get("error") != "" {
				return nil, fmt.Errorf("authorization refused: %s: %s", q.Get("error"), q.Get("error_description"))
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "osfoundry-client-matrix", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: r.URL + "/mcp", OAuthHandler: handler, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	defer session.Close()

	call := func(name string, args map[string]any) (map[string]any, error) {
		res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if res.IsError {
			b, _ := json.Marshal(res.Content)
			return nil, fmt.Errorf("%s answered %s", name, b)
		}
		var out map[string]any
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil || out == nil {
			return nil, fmt.Errorf("%s: no structured content: %v", name, err)
		}
		return out, nil
	}

	m := &matrixLine{t: t, label: "go-sdk " + moduleVersion("github.com/modelcontextprotocol/go-sdk")}
	exercised := []string{"list_sessions", "claim_connected_profile", "set_status", "list_agents",
		"read_session_state", "post_session_note", "read_session_mail", "reply_to_sender", "poll_resource_events", "ask_owner"}
	const handle = "matrix-go-sdk"
	var listed []string

	m.step("list", func() (string, error) {
		res, err := session.ListTools(ctx, nil)
		if err != nil {
			return "", err
		}
		for _, tool := range res.Tools {
			listed = append(listed, tool.Name)
		}
		for _, name := range exercised {
			if !slices.Contains(listed, name) {
				return "", fmt.Errorf("tools/list lacks %s: %v", name, listed)
			}
		}
		if len(scopesAsked) != 0 {
			return "", fmt.Errorf("tools/list started an authorization")
		}
		return fmt.Sprintf("%d tools, anonymous", len(listed)), nil
	})

	m.step("sign-in", func() (string, error) {
		if _, err := call("list_sessions", map[string]any{}); err != nil {
			return "", err
		}
		if len(scopesAsked) != 1 {
			return "", fmt.Errorf("expected one authorization, got %d", len(scopesAsked))
		}
		return fmt.Sprintf("first call list_sessions, asked %q", scopesAsked[0]), nil
	})

	m.step("step-up", func() (string, error) {
		before := len(scopesAsked)
		if _, err := call("claim_connected_profile", map[string]any{"handle": handle, "display_name": m.label}); err != nil {
			return "", err
		}
		if again := scopesAsked[before:]; len(again) > 0 {
			return fmt.Sprintf("%d more authorization, asked %q", len(again), again), nil
		}
		return "no new sign-in", nil
	})

	m.step("every tool", func() (string, error) {
		for _, name := range listed {
			if !slices.Contains(exercised, name) {
				return "", fmt.Errorf("the matrix does not call %s", name)
			}
		}
		status, err := call("set_status", map[string]any{"repo": "osfoundry", "branch": "client-matrix", "task": m.label})
		if err != nil {
			return "", err
		}
		if status["task"] != m.label {
			return "", fmt.Errorf("set_status answered %v", status)
		}
		agents, err := call("list_agents", map[string]any{})
		if err != nil {
			return "", err
		}
		if b, _ := json.Marshal(agents); !strings.Contains(string(b), handle) {
			return "", fmt.Errorf("list_agents lacks %s: %s", handle, b)
		}
		if err := o.invite(w.session.ID, clientName); err != nil {
			return "", err
		}
		if err := o.note(w.session.ID, "Welcome", "Tell me when you start."); err != nil {
			return "", err
		}
		s := map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID}
		sessions, err := call("list_sessions", map[string]any{})
		if err != nil {
			return "", err
		}
		if b, _ := json.Marshal(sessions); !strings.Contains(string(b), w.session.PublicID) {
			return "", fmt.Errorf("list_sessions lacks the invitation: %s", b)
		}
		if _, err := call("read_session_state", s); err != nil {
			return "", err
		}
		body := "Posted by " + m.label + "."
		note, err := call("post_session_note", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID,
			"subject": "Started", "body": body, "idempotency_key": "matrix-" + handle})
		if err != nil {
			return "", err
		}
		if note["duplicate"] != false || note["id"] == nil {
			return "", fmt.Errorf("post_session_note answered %v", note)
		}
		mail, err := call("read_session_mail", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID, "limit": 5})
		if err != nil {
			return "", err
		}
		b, _ := json.Marshal(mail)
		if !strings.Contains(string(b), body) {
			return "", fmt.Errorf("read_session_mail lacks the note: %s", b)
		}
		var read struct {
			Notes []matrixNote `json:"notes"`
		}
		if err := json.Unmarshal(b, &read); err != nil {
			return "", err
		}
		i := slices.IndexFunc(read.Notes, func(n matrixNote) bool { return n.FromKind == "owner" })
		if i < 0 {
			return "", fmt.Errorf("read_session_mail lacks the owner's note: %s", b)
		}
		reply, err := call("reply_to_sender", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID,
			"to": read.Notes[i].From, "subject": "Re: Welcome", "body": "Started.", "idempotency_key": "matrix-reply-" + handle})
		if err != nil {
			return "", err
		}
		if reply["duplicate"] != false || reply["id"] == nil {
			return "", fmt.Errorf("reply_to_sender answered %v", reply)
		}
		events, err := call("poll_resource_events", map[string]any{"resource_type": w.session.Type, "resource_id": w.session.PublicID, "after_sequence": 0})
		if err != nil {
			return "", err
		}
		if list, _ := events["events"].([]any); len(list) == 0 {
			return "", fmt.Errorf("poll_resource_events answered %v", events)
		}
		asked, err := call("ask_owner", map[string]any{"session_type": w.session.Type, "session_id": w.session.PublicID,
			"question": "Which client is this (" + m.label + ")?", "options": []string{"This one", "Another"}, "idempotency_key": "matrix-ask-" + handle})
		if err != nil {
			return "", err
		}
		if asked["status"] != "open" || asked["question_id"] == nil {
			return "", fmt.Errorf("ask_owner answered %v", asked)
		}
		return fmt.Sprintf("%d/%d", len(exercised), len(listed)), nil
	})

	m.step("revoke", func() (string, error) {
		before := len(scopesAsked)
		if err := o.revoke(clientName); err != nil {
			return "", err
		}
		if _, err := call("list_sessions", map[string]any{}); err != nil {
			return "", err
		}
		again := scopesAsked[before:]
		if len(again) != 1 {
			return "", fmt.Errorf("expected one new authorization after revocation, got %d", len(again))
		}
		return fmt.Sprintf("new authorization, asked %q, call answered", again[0]), nil
	})
	m.print()
}

// matrixLine records each step's outcome and logs one summary line; a failed
// step logs the line with its exact error and stops the test.
type matrixLine struct {
	t     *testing.T
	label string
	cells []string
	times []string
}

func (m *matrixLine) step(name string, fn func() (string, error)) {
	m.t.Helper()
	start := time.Now()
	note, err := fn()
	if err != nil {
		m.cells = append(m.cells, name+" ✗ "+strings.SplitN(err.Error(), "\n", 2)[0])
		m.print()
		m.t.Fatalf("%s: %v", name, err)
	}
	if note != "" {
		note = " (" + note + ")"
	}
	m.cells = append(m.cells, name+" ✓"+note)
	m.times = append(m.times, fmt.Sprintf("%s %.1f s", name, time.Since(start).Seconds()))
}

func (m *matrixLine) print() {
	m.t.Helper()
	m.t.Logf("matrix | %s | %s\n  took: %s", m.label, strings.Join(m.cells, " | "), strings.Join(m.times, ", "))
}

// moduleVersion is the version of a dependency compiled into the test binary.
func moduleVersion(path string) string {
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, d := range info.Deps {
			if d.Path == path {
				return d.Version
			}
		}
	}
	return "(unknown version)"
}

// matrixNote is what the matrix needs of a note read_session_mail returns.
type matrixNote struct {
	From     string `json:"from"`
	FromKind string `json:"from_kind"`
}

package main

import (
	"context"
	"fmt"
)

// A scenario is one kind of call, run in a closed loop at each concurrency:
// each of the step's workers sends its next call when the previous one
// answered. To add one, add it to scenarios; a scenario that is a fraction of
// a physical limit names that physical scenario, and its ratio to it at the
// same concurrency is reported.
type scenario struct {
	name string
	// physical is the physical scenario this one is compared with ("" for
	// none): a tool's physical statement, whose composite ceiling with the
	// physical HTTP round trip it is reported against, or the round trip
	// itself for a method that runs no statement.
	physical string
	// before runs before each of the scenario's steps (nil: nothing).
	before func() error
	// call makes worker w's i-th call; any error counts as a failed call.
	call func(w, i int) error
	// mcp, set for an MCP method, makes the call to the server at base;
	// call is then derived from it, and a twin " [SDK]" scenario calls the
	// server whose SDK answers everything (fast_paths.go).
	mcp func(base string, w, i int) error
}

// The physical scenarios: what PostgreSQL alone allows, one statement per
// call (physical.go).
const (
	physicalInsert   = "physical note insert"
	physicalMailPage = "physical mail page"
)

// pollScenario is the owner's Team mail poll when nothing changed.
const pollScenario = "owner poll, unchanged"

// initializeParams are a client's initialize.
var initializeParams = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
	"clientInfo": map[string]any{"name": "osfoundry-bench", "version": "1"}}

// scenarios lists every closed-loop scenario in the order a round runs them
// at each concurrency: each physical scenario right before the tools it
// bounds, so that a tool and its limit are measured close together. Write
// tools are bounded by the physical note insert, read tools by the physical
// mail page, the methods that read no database by the round trip alone.
func scenarios(ctx context.Context, fx *fixture) []scenario {
	writes := func() error { return fx.fillBuckets(ctx) }
	s := []scenario{
		{name: physicalHTTP, call: func(w, i int) error { return fx.physicalRoundTrip(w) }},
		{name: physicalInsert, call: func(w, i int) error { return fx.physicalInsert(ctx, w, i) }},
		{name: "set_status", physical: physicalInsert, mcp: func(base string, w, i int) error {
			return fx.tool(base, w, "set_status", map[string]any{"task": fmt.Sprintf("step %d", i), "repo": "osfoundry", "branch": "main"})
		}},
		{name: "post_session_note", physical: physicalInsert, before: writes, mcp: func(base string, w, i int) error {
			s := fx.session(w)
			return fx.tool(base, w, "post_session_note", map[string]any{"session_type": s.Type, "session_id": s.PublicID,
				"subject": "Progress", "body": fmt.Sprintf("Note %d of worker %d", i, w), "idempotency_key": fx.key("u")})
		}},
		{name: "post_session_note retry", physical: physicalInsert, before: writes, mcp: func(base string, w, i int) error {
			s := fx.session(w)
			return fx.tool(base, w, "post_session_note", map[string]any{"session_type": s.Type, "session_id": s.PublicID,
				"subject": "Retry", "body": "The same note again", "idempotency_key": fmt.Sprintf("r-%s-%d", fx.runID, w)})
		}},
		{name: "reply_to_sender", physical: physicalInsert, before: writes, mcp: func(base string, w, i int) error {
			s := fx.session(w)
			return fx.tool(base, w, "reply_to_sender", map[string]any{"session_type": s.Type, "session_id": s.PublicID, "to": fx.ownerSlug,
				"subject": "Re: seed", "body": fmt.Sprintf("Reply %d of worker %d", i, w), "idempotency_key": fx.key("a")})
		}},
		{name: "claim_connected_profile", physical: physicalInsert, mcp: func(base string, w, i int) error {
			return fx.tool(base, w, "claim_connected_profile", map[string]any{"handle": fmt.Sprintf("bench-%d", w), "display_name": fmt.Sprintf("Bench agent %d", w)})
		}},
		{name: physicalMailPage, call: func(w, i int) error { return fx.physicalMailPage(ctx, w) }},
		{name: "read_session_mail", physical: physicalMailPage, mcp: func(base string, w, i int) error {
			s := fx.session(w)
			return fx.tool(base, w, "read_session_mail", map[string]any{"session_type": s.Type, "session_id": s.PublicID, "limit": 10})
		}},
		{name: "list_agents", physical: physicalMailPage, mcp: func(base string, w, i int) error { return fx.tool(base, w, "list_agents", map[string]any{}) }},
		{name: "list_sessions", physical: physicalMailPage, mcp: func(base string, w, i int) error { return fx.tool(base, w, "list_sessions", map[string]any{}) }},
		{name: "read_session_state", physical: physicalMailPage, mcp: func(base string, w, i int) error {
			s := fx.session(w)
			return fx.tool(base, w, "read_session_state", map[string]any{"session_type": s.Type, "session_id": s.PublicID})
		}},
		{name: "poll_resource_events", physical: physicalMailPage, mcp: func(base string, w, i int) error {
			s := fx.session(w)
			return fx.tool(base, w, "poll_resource_events", map[string]any{"resource_type": s.Type, "resource_id": s.PublicID, "after_sequence": 0, "limit": 10})
		}},
		{name: "tools/list (anonymous)", physical: physicalHTTP, mcp: func(base string, w, i int) error { return fx.rpc(base, "", "tools/list", map[string]any{}) }},
		{name: "ping (anonymous)", physical: physicalHTTP, mcp: func(base string, w, i int) error { return fx.rpc(base, "", "ping", nil) }},
		{name: "initialize (anonymous)", physical: physicalHTTP, mcp: func(base string, w, i int) error { return fx.rpc(base, "", "initialize", initializeParams) }},
	}
	if fx.pollURL != "" {
		// The write steps add notes: reload the page for a current cursor.
		s = append(s, scenario{name: pollScenario, before: fx.loadPollURL, call: func(w, i int) error { return fx.poll() }})
	}
	return append(fx.withSDKTwins(s), fx.searchScenarios()...)
}

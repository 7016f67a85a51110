package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/osfoundry/osfoundry/store/testfactory"
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
	// before runs before each of the scenario's steps, given its
	// concurrency (nil: nothing).
	before func(c int) error
	// call makes worker w's i-th call; any error counts as a failed call.
	call func(w, i int) error
	// mcp, set for an MCP method, makes the call to the server at base;
	// call is then derived from it, and a twin " [SDK]" scenario calls the
	// server whose SDK answers everything (fast_paths.go).
	mcp func(base string, w, i int) error
	// tool is the MCP tool the scenario calls ("" for none), as the
	// server's metrics name it.
	tool string
	// physicalCall is the scenario of the tool's physical call
	// (physical_call.go), or the round trip for a method that runs no
	// statement: ratio_to_physical_call divides by it.
	physicalCall string
	// phases, set for a physical call, are the phases of worker w's i-th
	// call of the last step, when --tail asked for them.
	phases func(w, i int) (phases, bool)
}

// The physical scenarios: what PostgreSQL alone allows, one statement per
// call (testfactory.RunPhysical).
const (
	physicalInsert   = "physical note insert"
	physicalMailPage = "physical mail page"
)

// pollScenario is the owner's Team mail poll when nothing changed.
const pollScenario = "owner poll, unchanged"

// initializeParams are a client's initialize.
var initializeParams = map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
	"clientInfo": map[string]any{"name": "osfoundry-bench", "version": "1"}}

// toolCase is an MCP tool an agent calls in a loop: its arguments for
// worker w's i-th call and its physical statement's (testfactory.PhysicalArgs).
type toolCase struct {
	// name is the scenario's: the tool's, and for a second way to call it,
	// what it is ("post_session_note retry").
	name string
	// physical is the physical statement scenario it is a fraction of.
	physical string
	// writes marks a tool that draws on the write bucket (limits.go).
	writes bool
	args   func(w, i int) map[string]any
	phys   func(w, i int) testfactory.PhysicalArgs
}

// tool is the tool's name: a scenario's name without what follows it.
func (t toolCase) tool() string { return strings.Fields(t.name)[0] }

// tools are the tools measured, in the order a round runs them.
func (fx *fixture) tools() []toolCase {
	mine := func(w int) testfactory.PhysicalArgs {
		return testfactory.PhysicalArgs{Workspace: fx.workspaceID, Session: fx.session(w).ID, Connection: fx.agents[w].connectionID}
	}
	ref := func(w int) map[string]any {
		s := fx.session(w)
		return map[string]any{"session_type": s.Type, "session_id": s.PublicID}
	}
	with := func(m map[string]any, kv ...any) map[string]any {
		for k := 0; k < len(kv); k += 2 {
			m[kv[k].(string)] = kv[k+1]
		}
		return m
	}
	retryKey := func(w int) string { return fmt.Sprintf("r-%s-%d", fx.runID, w) }
	return []toolCase{
		{name: "set_status", physical: physicalInsert,
			args: func(w, i int) map[string]any {
				return map[string]any{"task": fmt.Sprintf("step %d", i), "repo": "osfoundry", "branch": "main"}
			},
			phys: func(w, i int) testfactory.PhysicalArgs {
				a := mine(w)
				a.Text = fmt.Sprintf("step %d", i)
				return a
			}},
		{name: "post_session_note", physical: physicalInsert, writes: true,
			args: func(w, i int) map[string]any {
				return with(ref(w), "subject", "Progress", "body", fmt.Sprintf("Note %d of worker %d", i, w), "idempotency_key", fx.key("u"))
			},
			phys: func(w, i int) testfactory.PhysicalArgs {
				return fx.physicalArgs(w, fmt.Sprintf("Note %d of worker %d", i, w), fx.key("pu"))
			}},
		{name: "post_session_note retry", physical: physicalInsert, writes: true,
			args: func(w, i int) map[string]any {
				return with(ref(w), "subject", "Retry", "body", "The same note again", "idempotency_key", retryKey(w))
			},
			phys: func(w, i int) testfactory.PhysicalArgs {
				return fx.physicalArgs(w, "The same note again", "p"+retryKey(w))
			}},
		{name: "reply_to_sender", physical: physicalInsert, writes: true,
			args: func(w, i int) map[string]any {
				return with(ref(w), "to", fx.ownerSlug, "subject", "Re: seed", "body", fmt.Sprintf("Reply %d of worker %d", i, w), "idempotency_key", fx.key("a"))
			},
			phys: func(w, i int) testfactory.PhysicalArgs {
				a := fx.physicalArgs(w, fmt.Sprintf("Reply %d of worker %d", i, w), fx.key("pa"))
				a.To = fx.ownerSlug
				return a
			}},
		{name: "claim_connected_profile", physical: physicalInsert,
			args: func(w, i int) map[string]any {
				return map[string]any{"handle": fmt.Sprintf("bench-%d", w), "display_name": fmt.Sprintf("Bench agent %d", w)}
			},
			phys: func(w, i int) testfactory.PhysicalArgs {
				a := mine(w)
				a.Text = fmt.Sprintf("Bench agent %d", w)
				return a
			}},
		{name: "read_session_mail", physical: physicalMailPage,
			args: func(w, i int) map[string]any { return with(ref(w), "limit", 10) },
			phys: func(w, i int) testfactory.PhysicalArgs { return mine(w) }},
		{name: "list_agents", physical: physicalMailPage,
			args: func(w, i int) map[string]any { return map[string]any{} }, phys: func(w, i int) testfactory.PhysicalArgs { return mine(w) }},
		{name: "list_sessions", physical: physicalMailPage,
			args: func(w, i int) map[string]any { return map[string]any{} }, phys: func(w, i int) testfactory.PhysicalArgs { return mine(w) }},
		{name: "read_session_state", physical: physicalMailPage,
			args: func(w, i int) map[string]any { return ref(w) }, phys: func(w, i int) testfactory.PhysicalArgs { return mine(w) }},
		{name: "poll_resource_events", physical: physicalMailPage,
			args: func(w, i int) map[string]any {
				s := fx.session(w)
				return map[string]any{"resource_type": s.Type, "resource_id": s.PublicID, "after_sequence": 0, "limit": 10}
			},
			phys: func(w, i int) testfactory.PhysicalArgs { return mine(w) }},
	}
}

// scenarios lists every closed-loop scenario in the order a round runs them
// at each concurrency: each physical scenario right before the tools it
// bounds, so that a tool and its limits are measured close together. Write
// tools are bounded by the physical note insert, read tools by the physical
// mail page, the methods that read no database by the round trip alone; and
// each tool by its own physical call, run right before it.
func scenarios(ctx context.Context, fx *fixture) []scenario {
	s := []scenario{
		{name: physicalHTTP, call: func(w, i int) error { return fx.physicalRoundTrip(w) }},
		{name: physicalInsert, call: func(w, i int) error { return fx.physicalInsert(ctx, w, i) }},
	}
	page := false
	for _, t := range fx.tools() {
		if t.physical == physicalMailPage && !page {
			page = true
			s = append(s, scenario{name: physicalMailPage, call: func(w, i int) error { return fx.physicalMailPage(ctx, w) }})
		}
		pc := fx.physicalCallScenario(t.name, t.args, t.phys)
		sc := scenario{name: t.name, tool: t.tool(), physical: t.physical, physicalCall: pc.name, mcp: func(base string, w, i int) error {
			return fx.tool(base, w, t.tool(), t.args(w, i))
		}}
		if t.writes {
			sc.before = func(c int) error { fx.level = c; return fx.fillBuckets(ctx) }
			sc.mcp = func(base string, w, i int) error {
				a := fx.writer(w, i)
				return fx.tool(base, a, t.tool(), t.args(a, i))
			}
		}
		s = append(s, pc, sc)
	}
	for _, m := range []struct {
		name, method string
		params       any
	}{{"tools/list (anonymous)", "tools/list", map[string]any{}}, {"ping (anonymous)", "ping", nil}, {"initialize (anonymous)", "initialize", initializeParams}} {
		s = append(s, scenario{name: m.name, physical: physicalHTTP, physicalCall: physicalHTTP,
			mcp: func(base string, w, i int) error { return fx.rpc(base, "", m.method, m.params) }})
	}
	if fx.pollURL != "" {
		// The write steps add notes: reload the page for a current cursor.
		s = append(s, scenario{name: pollScenario, before: func(int) error { return fx.loadPollURL() }, call: func(w, i int) error { return fx.poll() }})
	}
	return append(fx.withSDKTwins(s), fx.searchScenarios()...)
}

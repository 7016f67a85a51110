package main

import (
	"context"
	"strconv"

	"github.com/osfoundry/osfoundry/store/testfactory"
)

// The physical scenarios measure what PostgreSQL alone allows for what a
// tool does, as pgbench would: one statement, one round trip, through pgx
// with its statement cache (prepared once per connection), no HTTP, no MCP,
// no token, no transaction of several statements. Each tool's statement is
// the store's bench loader's (testfactory.RunPhysical): the physical
// statement scenarios run two of them straight from the load generator, the
// physical tool calls (physical_call.go) each tool's behind a minimal HTTP
// handler.

// physicalInsert is the physical note insert: post_session_note's statement,
// a new key per call, into the sessions of the physical scenarios.
func (fx *fixture) physicalInsert(ctx context.Context, w, i int) error {
	_, err := testfactory.RunPhysical(ctx, fx.pool, "post_session_note", fx.physicalArgs(w, "Note "+strconv.Itoa(i)+" of worker "+strconv.Itoa(w), fx.key("p")))
	return err
}

// physicalMailPage is the physical mail page: read_session_mail's statement.
func (fx *fixture) physicalMailPage(ctx context.Context, w int) error {
	_, err := testfactory.RunPhysical(ctx, fx.pool, "read_session_mail", testfactory.PhysicalArgs{Session: fx.session(w).ID, Connection: fx.agents[w].connectionID})
	return err
}

// physicalArgs are worker w's arguments of a physical write, with text and
// key: its note goes to a session of the physical scenarios.
func (fx *fixture) physicalArgs(w int, text, key string) testfactory.PhysicalArgs {
	a := fx.agents[w]
	return testfactory.PhysicalArgs{Workspace: fx.workspaceID, Session: fx.physical[w%len(fx.physical)].ID, Connection: a.connectionID, Slug: a.slug, Text: text, Key: key}
}

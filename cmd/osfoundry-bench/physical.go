package main

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// errShortPage is a physical mail page without its 10 notes.
var errShortPage = errors.New("physical mail page: fewer than 10 notes")

// The physical scenarios measure what PostgreSQL alone allows for what a
// tool does, as pgbench would: one statement, one round trip, through pgx
// with its statement cache (prepared once per connection), no HTTP, no MCP,
// no token, no transaction of several statements. They are the ceiling a
// tool's design can approach, not a copy of that design. Each tool's
// statement is in physicalStatements: the physical statement scenarios run
// two of them straight from the load generator, the physical tool calls
// (physical_call.go) each tool's behind a minimal HTTP handler.

// physicalArgs are what a physical statement needs, by internal ids: the
// tools' own arguments name sessions by public id and agents by token,
// which only a statement of the tool's design resolves.
type physicalArgs struct {
	Workspace  int64  `json:"workspace"`
	Session    int64  `json:"session"`
	Connection int64  `json:"connection"`
	Slug       string `json:"slug,omitempty"`
	To         string `json:"to,omitempty"`
	Key        string `json:"key,omitempty"`
	Text       string `json:"text,omitempty"`
	// Bytes is the size of the tool's answer, which the physical call writes.
	Bytes int `json:"bytes,omitempty"`
}

// physicalStatement is a tool's one physical statement.
type physicalStatement struct {
	sql  string
	args func(a physicalArgs) []any
	// rows is how many rows the statement must return (-1: any).
	rows int
}

// noteInsertSQL writes one agent note with its idempotency key in a single
// INSERT … ON CONFLICT DO NOTHING RETURNING: the row post_session_note (or,
// with a recipient, reply_to_sender) adds, and the unique key that makes it
// idempotent. Its callers write to sessions no agent is invited to.
const noteInsertSQL = `
	INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name,
		recipient_slug, message_type, subject, body, idempotency_key)
	VALUES ($1, $2, 'agent', $3, $4, 'Bench', NULLIF($5, ''), CASE WHEN $5 = '' THEN 'note' ELSE 'reply' END, 'Physical', $6, $7)
	ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING RETURNING id`

func noteInsertArgs(a physicalArgs) []any {
	return []any{a.Workspace, a.Session, a.Connection, a.Slug, a.To, a.Text, a.Key}
}

// physicalStatements are the tools' physical statements, by tool (and the
// duplicate post), or their nearest equivalent by internal ids.
var physicalStatements = map[string]physicalStatement{
	"set_status": {sql: `
		INSERT INTO statuses AS s (connection_id, repo, repo_key, branch, task) VALUES ($1, 'osfoundry', 'osfoundry', 'main', $2)
		ON CONFLICT (connection_id) DO UPDATE SET task = EXCLUDED.task, updated_at = now()
		RETURNING s.repo, s.branch, s.task, s.updated_at`,
		args: func(a physicalArgs) []any { return []any{a.Connection, a.Text} }, rows: 1},
	"post_session_note": {sql: noteInsertSQL, args: noteInsertArgs, rows: 1},
	// The same key and body again: the conflict writes nothing.
	"post_session_note retry": {sql: noteInsertSQL, args: noteInsertArgs, rows: -1},
	"reply_to_sender":         {sql: noteInsertSQL, args: noteInsertArgs, rows: 1},
	"claim_connected_profile": {sql: `
		UPDATE agent_profiles SET display_name = $3 WHERE workspace_id = $1 AND connection_id = $2
		RETURNING connection_id, handle, display_name`,
		args: func(a physicalArgs) []any { return []any{a.Workspace, a.Connection, a.Text} }, rows: 1},
	// The newest 10 notes of a session, with the check that the connection
	// is invited: the page read_session_mail returns.
	"read_session_mail": {sql: `
		SELECT n.id, n.sender_kind, n.sender_slug, n.sender_name, n.recipient_slug, n.message_type, n.subject, n.body, n.created_at
		FROM notes n
		WHERE n.session_id = $1 AND EXISTS (SELECT 1 FROM invitations i WHERE i.session_id = $1 AND i.connection_id = $2)
		ORDER BY n.session_id, n.id DESC
		LIMIT 10`,
		args: func(a physicalArgs) []any { return []any{a.Session, a.Connection} }, rows: 10},
	"list_agents": {sql: `
		SELECT p.connection_id, p.handle, p.display_name, c.sender_slug, c.last_seen_at, st.repo, st.branch, st.task, st.updated_at
		FROM agent_profiles p
		JOIN connections c ON c.id = p.connection_id AND c.revoked_at IS NULL
		LEFT JOIN statuses st ON st.connection_id = p.connection_id
		WHERE p.workspace_id = $1
		ORDER BY p.handle`,
		args: func(a physicalArgs) []any { return []any{a.Workspace} }, rows: -1},
	"list_sessions": {sql: `
		SELECT s.id, s.session_type, s.public_id, s.title, s.last_event_seq, s.created_at, s.updated_at, pr.name, i.role
		FROM invitations i
		JOIN sessions s ON s.id = i.session_id
		JOIN projects pr ON pr.id = s.project_id
		WHERE i.workspace_id = $1 AND i.connection_id = $2
		ORDER BY s.id DESC`,
		args: func(a physicalArgs) []any { return []any{a.Workspace, a.Connection} }, rows: -1},
	"read_session_state": {sql: `
		SELECT s.session_type, s.public_id, s.title, s.last_event_seq, pr.name, i.role, p.handle, p.display_name, c.sender_slug, pi.role, c.last_seen_at
		FROM sessions s
		JOIN projects pr ON pr.id = s.project_id
		JOIN invitations i ON i.session_id = s.id AND i.connection_id = $2
		JOIN invitations pi ON pi.session_id = s.id
		JOIN connections c ON c.id = pi.connection_id
		LEFT JOIN agent_profiles p ON p.connection_id = pi.connection_id
		WHERE s.id = $1
		ORDER BY p.handle NULLS LAST, c.id`,
		args: func(a physicalArgs) []any { return []any{a.Session, a.Connection} }, rows: -1},
	"poll_resource_events": {sql: `
		SELECT e.sequence, e.kind, e.note_id, e.payload, e.created_at
		FROM resource_events e
		WHERE e.session_id = $1 AND e.sequence > 0
			AND EXISTS (SELECT 1 FROM invitations i WHERE i.session_id = $1 AND i.connection_id = $2)
		ORDER BY e.sequence LIMIT 10`,
		args: func(a physicalArgs) []any { return []any{a.Session, a.Connection} }, rows: 10},
}

// querier is what runs a physical statement: a pool or a connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// errRowCount is a physical statement that returned other than its rows.
var errRowCount = errors.New("physical statement: wrong number of rows")

// runPhysical runs tool's physical statement and returns its rows' values.
func runPhysical(ctx context.Context, q querier, tool string, a physicalArgs) ([][]any, error) {
	ps, ok := physicalStatements[tool]
	if !ok {
		return nil, errors.New("no physical statement for " + strconv.Quote(tool))
	}
	rows, err := q.Query(ctx, ps.sql, ps.args(a)...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out [][]any
	for rows.Next() {
		v, err := rows.Values()
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if ps.rows >= 0 && len(out) != ps.rows {
		if tool == "read_session_mail" {
			return nil, errShortPage
		}
		return nil, errRowCount
	}
	return out, nil
}

// physicalInsert is the physical note insert: post_session_note's statement,
// a new key per call, into the sessions of the physical scenarios.
func (fx *fixture) physicalInsert(ctx context.Context, w, i int) error {
	_, err := runPhysical(ctx, fx.pool, "post_session_note", fx.physicalArgs(w, "Note "+strconv.Itoa(i)+" of worker "+strconv.Itoa(w), fx.key("p")))
	return err
}

// physicalMailPage is the physical mail page: read_session_mail's statement.
func (fx *fixture) physicalMailPage(ctx context.Context, w int) error {
	_, err := runPhysical(ctx, fx.pool, "read_session_mail", physicalArgs{Session: fx.session(w).ID, Connection: fx.agents[w].connectionID})
	return err
}

// physicalArgs are worker w's arguments of a physical write, with text and
// key: its note goes to a session of the physical scenarios.
func (fx *fixture) physicalArgs(w int, text, key string) physicalArgs {
	a := fx.agents[w]
	return physicalArgs{Workspace: fx.workspaceID, Session: fx.physical[w%len(fx.physical)].ID, Connection: a.connectionID, Slug: a.slug, Text: text, Key: key}
}

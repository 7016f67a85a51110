package testfactory

import (
	"context"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// A tool's physical statement is the one statement, one round trip, that
// bounds what the tool does: the ceiling the bench's physical scenarios
// measure, not a copy of the tool's design.

// PhysicalArgs are what a physical statement needs, by internal ids: only a
// statement of the tool's design resolves public ids and tokens.
type PhysicalArgs struct {
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
	args func(a PhysicalArgs) []any
	// rows is how many rows the statement must return (-1: any).
	rows int
}

// noteInsertSQL is the idempotent agent note of post_session_note (or, with
// a recipient, reply_to_sender). Its callers write to sessions no agent is
// invited to.
const noteInsertSQL = `
	INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name,
		recipient_slug, message_type, subject, body, idempotency_key)
	VALUES ($1, $2, 'agent', $3, $4, 'Bench', NULLIF($5, ''), CASE WHEN $5 = '' THEN 'note' ELSE 'reply' END, 'Physical', $6, $7)
	ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING RETURNING id`

func noteInsertArgs(a PhysicalArgs) []any {
	return []any{a.Workspace, a.Session, a.Connection, a.Slug, a.To, a.Text, a.Key}
}

// physicalStatements are the tools' physical statements, by tool (and the
// duplicate post), or their nearest equivalent by internal ids.
var physicalStatements = map[string]physicalStatement{
	"set_status": {sql: `
		INSERT INTO statuses AS s (connection_id, repo, repo_key, branch, task) VALUES ($1, 'osfoundry', 'osfoundry', 'main', $2)
		ON CONFLICT (connection_id) DO UPDATE SET task = EXCLUDED.task, updated_at = now()
		RETURNING s.repo, s.branch, s.task, s.updated_at`,
		args: func(a PhysicalArgs) []any { return []any{a.Connection, a.Text} }, rows: 1},
	"post_session_note": {sql: noteInsertSQL, args: noteInsertArgs, rows: 1},
	// The same key and body again: the conflict writes nothing.
	"post_session_note retry": {sql: noteInsertSQL, args: noteInsertArgs, rows: -1},
	"reply_to_sender":         {sql: noteInsertSQL, args: noteInsertArgs, rows: 1},
	"claim_connected_profile": {sql: `
		UPDATE agent_profiles SET display_name = $3 WHERE workspace_id = $1 AND connection_id = $2
		RETURNING connection_id, handle, display_name`,
		args: func(a PhysicalArgs) []any { return []any{a.Workspace, a.Connection, a.Text} }, rows: 1},
	// The page read_session_mail returns, if the connection is invited.
	"read_session_mail": {sql: `
		SELECT n.id, n.sender_kind, n.sender_slug, n.sender_name, n.recipient_slug, n.message_type, n.subject, n.body, n.created_at
		FROM notes n
		WHERE n.session_id = $1 AND EXISTS (SELECT 1 FROM invitations i WHERE i.session_id = $1 AND i.connection_id = $2)
		ORDER BY n.session_id, n.id DESC
		LIMIT 10`,
		args: func(a PhysicalArgs) []any { return []any{a.Session, a.Connection} }, rows: 10},
	"list_agents": {sql: `
		SELECT p.connection_id, p.handle, p.display_name, c.sender_slug, c.last_seen_at, st.repo, st.branch, st.task, st.updated_at
		FROM agent_profiles p
		JOIN connections c ON c.id = p.connection_id AND c.revoked_at IS NULL
		LEFT JOIN statuses st ON st.connection_id = p.connection_id
		WHERE p.workspace_id = $1
		ORDER BY p.handle`,
		args: func(a PhysicalArgs) []any { return []any{a.Workspace} }, rows: -1},
	"list_sessions": {sql: `
		SELECT s.id, s.session_type, s.public_id, s.title, s.last_event_seq, s.created_at, s.updated_at, pr.name, i.role
		FROM invitations i
		JOIN sessions s ON s.id = i.session_id
		JOIN projects pr ON pr.id = s.project_id
		WHERE i.workspace_id = $1 AND i.connection_id = $2
		ORDER BY s.id DESC`,
		args: func(a PhysicalArgs) []any { return []any{a.Workspace, a.Connection} }, rows: -1},
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
		args: func(a PhysicalArgs) []any { return []any{a.Session, a.Connection} }, rows: -1},
	"poll_resource_events": {sql: `
		SELECT e.sequence, e.kind, e.note_id, e.payload, e.created_at
		FROM resource_events e
		WHERE e.session_id = $1 AND e.sequence > 0
			AND EXISTS (SELECT 1 FROM invitations i WHERE i.session_id = $1 AND i.connection_id = $2)
		ORDER BY e.sequence LIMIT 10`,
		args: func(a PhysicalArgs) []any { return []any{a.Session, a.Connection} }, rows: 10},
}

// Querier runs a physical statement: a pool or one of its connections.
type Querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

var (
	errShortPage = errors.New("physical mail page: fewer than 10 notes")
	errRowCount  = errors.New("physical statement: wrong number of rows")
)

// HasPhysical reports whether tool has a physical statement.
func HasPhysical(tool string) bool {
	_, ok := physicalStatements[tool]
	return ok
}

// RunPhysical runs tool's physical statement and returns its rows' values;
// an error when it returns other than its rows.
func RunPhysical(ctx context.Context, q Querier, tool string, a PhysicalArgs) ([][]any, error) {
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

package main

import (
	"context"
	"errors"
	"strconv"
	"time"
)

// errShortPage is a physical mail page without its 10 notes.
var errShortPage = errors.New("physical mail page: fewer than 10 notes")

// The physical scenarios measure what PostgreSQL alone allows for what a
// tool does, as pgbench would: one statement, one round trip, through pgx
// with its statement cache (prepared once per connection), no HTTP, no MCP,
// no token, no transaction of several statements. They are the ceiling a
// tool's design can approach, not a copy of that design.

// physicalInsert writes one agent note with its idempotency key in a single
// INSERT … ON CONFLICT DO NOTHING RETURNING: the row post_session_note adds,
// and the unique key that makes it idempotent.
func (fx *fixture) physicalInsert(ctx context.Context, w, i int) error {
	a := fx.agents[w]
	var id int64
	return fx.pool.QueryRow(ctx, `
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name,
			message_type, subject, body, idempotency_key)
		VALUES ($1, $2, 'agent', $3, $4, 'Bench', 'note', 'Physical', $5, $6)
		ON CONFLICT (sender_connection_id, idempotency_key) DO NOTHING RETURNING id`,
		fx.workspaceID, fx.session(w).ID, a.connectionID, a.slug, "Note "+strconv.Itoa(i)+" of worker "+strconv.Itoa(w), fx.key("p")).Scan(&id)
}

// physicalMailPage reads the newest 10 notes of a session, in one statement
// that also checks the connection is invited to it: the page
// read_session_mail returns, by the session's internal id.
func (fx *fixture) physicalMailPage(ctx context.Context, w int) error {
	rows, err := fx.pool.Query(ctx, `
		SELECT n.id, n.sender_kind, n.sender_slug, n.sender_name, n.recipient_slug, n.message_type, n.subject, n.body, n.created_at
		FROM notes n
		WHERE n.session_id = $1 AND EXISTS (SELECT 1 FROM invitations i WHERE i.session_id = $1 AND i.connection_id = $2)
		ORDER BY n.session_id, n.id DESC
		LIMIT 10`, fx.session(w).ID, fx.agents[w].connectionID)
	if err != nil {
		return err
	}
	defer rows.Close()
	n := 0
	for rows.Next() {
		var id int64
		var kind, slug, name, typ, subject, body string
		var to *string
		var at time.Time
		if err := rows.Scan(&id, &kind, &slug, &name, &to, &typ, &subject, &body, &at); err != nil {
			return err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != 10 {
		return errShortPage
	}
	return nil
}

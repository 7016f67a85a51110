package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/osfoundry/osfoundry/store/storetest"
)

// TestSchemaConstraints proves each CHECK, UNIQUE and cross-workspace foreign
// key refuses what it should, straight in SQL, so that no code path can write
// such a row.
func TestSchemaConstraints(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := storetest.New(t)
	// Fixture: two workspaces with an owner, a project, a connection, a profile and a session each.
	setup := `
		INSERT INTO workspaces (id, name) OVERRIDING SYSTEM VALUE VALUES (1, 'one'), (2, 'two');
		INSERT INTO owners (id, workspace_id, email, display_name, password_hash) OVERRIDING SYSTEM VALUE VALUES
			(1, 1, 'a@example.com', 'A', '$argon2id$x'), (2, 2, 'b@example.com', 'B', '$argon2id$x');
		INSERT INTO projects (id, workspace_id, name) OVERRIDING SYSTEM VALUE VALUES (1, 1, 'P1'), (2, 2, 'P2');
		INSERT INTO oauth_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method) VALUES ('cli', 'Client', '{http://localhost/cb}', 'none');
		INSERT INTO connections (id, workspace_id, owner_id, client_id, client_name, scopes, sender_slug) OVERRIDING SYSTEM VALUE VALUES
			(1, 1, 1, 'cli', 'Client', '{osfoundry:read,osfoundry:write}', 'ext-alice'),
			(2, 2, 2, NULL, 'Static', '{osfoundry:read}', NULL),
			(3, 1, 1, NULL, 'Static', '{osfoundry:read}', NULL);
		INSERT INTO agent_profiles (connection_id, workspace_id, handle, display_name) VALUES (1, 1, 'alice', 'Alice'), (2, 2, 'bob', 'Bob');
		INSERT INTO sessions (id, workspace_id, project_id, session_type, public_id, title) OVERRIDING SYSTEM VALUE VALUES
			(1, 1, 1, 'agent_session', 's1', 'S1'), (2, 2, 2, 'team_session', 's2', 'S2');
		INSERT INTO notes (workspace_id, session_id, sender_kind, sender_connection_id, sender_slug, sender_name, message_type, subject, body, idempotency_key)
			VALUES (1, 1, 'agent', 1, 'ext-alice', 'Alice', 'note', 's', 'b', 'k1');
		SELECT setval(pg_get_serial_sequence(t, 'id'), 100) FROM unnest(ARRAY['workspaces', 'owners', 'projects', 'connections', 'sessions']) AS t;`
	storetest.SQL(t, st).Exec(setup)
	const (
		check  = "23514"
		unique = "23505"
		fk     = "23503"
	)
	note := func(cols, vals string) string {
		return `INSERT INTO notes (workspace_id, session_id, sender_kind, sender_slug, sender_name, message_type, subject, body` + cols +
			`) VALUES (1, 1, ` + vals + `)`
	}
	long := func(n int) string { return "'" + strings.Repeat("x", n) + "'" }
	tests := []struct {
		name, sql, code string
	}{
		{"workspace name empty", `INSERT INTO workspaces (name) VALUES ('')`, check},
		{"owner email upper case", `INSERT INTO owners (workspace_id, email, display_name, password_hash) VALUES (1, 'X@example.com', 'X', '$argon2id$x')`, check},
		{"owner email duplicate", `INSERT INTO owners (workspace_id, email, display_name, password_hash) VALUES (2, 'a@example.com', 'X', '$argon2id$x')`, unique},
		{"owner password not argon2id", `INSERT INTO owners (workspace_id, email, display_name, password_hash) VALUES (1, 'x@example.com', 'X', 'plain')`, check},
		{"project name duplicate in workspace", `INSERT INTO projects (workspace_id, name) VALUES (1, 'P1')`, unique},
		{"project name blank", `INSERT INTO projects (workspace_id, name) VALUES (1, '   ')`, check},
		{"client public with secret", `INSERT INTO oauth_clients (client_id, client_secret_hash, redirect_uris, token_endpoint_auth_method) VALUES ('c2', '\x00', '{x:/cb}', 'none')`, check},
		{"client confidential without secret", `INSERT INTO oauth_clients (client_id, redirect_uris, token_endpoint_auth_method) VALUES ('c3', '{x:/cb}', 'client_secret_basic')`, check},
		{"client no redirect uris", `INSERT INTO oauth_clients (client_id, redirect_uris, token_endpoint_auth_method) VALUES ('c4', '{}', 'none')`, check},
		{"connection unknown scope", `INSERT INTO connections (workspace_id, owner_id, client_name, scopes) VALUES (1, 1, 'c', '{admin}')`, check},
		{"connection no scope", `INSERT INTO connections (workspace_id, owner_id, client_name, scopes) VALUES (1, 1, 'c', '{}')`, check},
		{"connection owner of other workspace", `INSERT INTO connections (workspace_id, owner_id, client_name, scopes) VALUES (1, 2, 'c', '{osfoundry:read}')`, fk},
		{"connection slug taken", `UPDATE connections SET sender_slug = 'ext-alice' WHERE id = 3`, unique},
		{"connection slug shape", `UPDATE connections SET sender_slug = 'alice' WHERE id = 3`, check},
		{"code challenge not S256 shaped", `INSERT INTO oauth_codes (code_hash, connection_id, client_id, redirect_uri, code_challenge, resource, scopes, expires_at) VALUES (decode(repeat('00', 32), 'hex'), 1, 'cli', 'x', 'short', 'r', '{}', now())`, check},
		{"access token hash length", `INSERT INTO access_tokens (token_hash, connection_id, resource, scopes, expires_at) VALUES ('\x01', 1, 'r', '{osfoundry:read}', now())`, check},
		{"refresh token unknown scope", `INSERT INTO refresh_tokens (token_hash, connection_id, resource, scopes, expires_at) VALUES (decode(repeat('00', 32), 'hex'), 1, 'r', '{x}', now())`, check},
		{"handle pattern upper case", `INSERT INTO agent_profiles (connection_id, workspace_id, handle, display_name) VALUES (3, 1, 'Alice', 'A')`, check},
		{"handle pattern too short", `INSERT INTO agent_profiles (connection_id, workspace_id, handle, display_name) VALUES (3, 1, 'a', 'A')`, check},
		{"handle pattern leading dash", `INSERT INTO agent_profiles (connection_id, workspace_id, handle, display_name) VALUES (3, 1, '-alice', 'A')`, check},
		{"handle taken in workspace", `INSERT INTO agent_profiles (connection_id, workspace_id, handle, display_name) VALUES (3, 1, 'alice', 'A')`, unique},
		{"profile display name too long", `INSERT INTO agent_profiles (connection_id, workspace_id, handle, display_name) VALUES (3, 1, 'carol', ` + long(81) + `)`, check},
		{"profile across workspaces", `INSERT INTO agent_profiles (connection_id, workspace_id, handle, display_name) VALUES (3, 2, 'carol', 'C')`, fk},
		{"status repo too long", `INSERT INTO statuses (connection_id, repo) VALUES (1, ` + long(301) + `)`, check},
		{"status branch too long", `INSERT INTO statuses (connection_id, branch) VALUES (1, ` + long(201) + `)`, check},
		{"status task too long", `INSERT INTO statuses (connection_id, task) VALUES (1, ` + long(281) + `)`, check},
		{"status without profile", `INSERT INTO statuses (connection_id, task) VALUES (3, 't')`, fk},
		{"seat across workspaces", `INSERT INTO project_seats (workspace_id, project_id, connection_id) VALUES (1, 2, 1)`, fk},
		{"session type", `INSERT INTO sessions (workspace_id, project_id, session_type, public_id, title) VALUES (1, 1, 'graph_session', 'sx', 'T')`, check},
		{"session public id duplicate", `INSERT INTO sessions (workspace_id, project_id, session_type, public_id, title) VALUES (1, 1, 'agent_session', 's1', 'T')`, unique},
		{"session in other workspace's project", `INSERT INTO sessions (workspace_id, project_id, session_type, public_id, title) VALUES (1, 2, 'agent_session', 'sy', 'T')`, fk},
		{"invitation role", `INSERT INTO invitations (workspace_id, session_id, connection_id, role) VALUES (1, 1, 1, 'owner')`, check},
		{"invitation across workspaces", `INSERT INTO invitations (workspace_id, session_id, connection_id, role) VALUES (1, 1, 2, 'runner')`, fk},
		{"note subject too long", note(``, `'owner', 'o', 'O', 'note', `+long(201)+`, 'b'`), check},
		{"note body too long", note(`, sender_owner_id`, `'owner', 'o', 'O', 'note', 's', `+long(10001)+`, 1`), check},
		{"note message type", note(`, sender_owner_id`, `'owner', 'o', 'O', 'memo', 's', 'b', 1`), check},
		{"note agent without connection", note(``, `'agent', 'ext-x', 'X', 'note', 's', 'b'`), check},
		{"note analysis from agent", note(`, sender_connection_id`, `'agent', 'ext-alice', 'A', 'analysis', 's', 'b', 1`), check},
		{"note owner with idempotency key", note(`, sender_owner_id, idempotency_key`, `'owner', 'o', 'O', 'note', 's', 'b', 1, 'k'`), check},
		{"note idempotency key reused", note(`, sender_connection_id, idempotency_key`, `'agent', 'ext-alice', 'A', 'note', 's', 'b', 1, 'k1'`), unique},
		{"note idempotency key too long", note(`, sender_connection_id, idempotency_key`, `'agent', 'ext-alice', 'A', 'note', 's', 'b', 1, `+long(201)), check},
		{"note sender of other workspace", note(`, sender_connection_id`, `'agent', 'ext-bob', 'B', 'note', 's', 'b', 2`), fk},
		{"event sequence duplicate", `INSERT INTO resource_events (session_id, sequence, kind) VALUES (1, 1, 'note_posted'), (1, 1, 'note_posted')`, unique},
		{"event kind", `INSERT INTO resource_events (session_id, sequence, kind) VALUES (1, 5, 'exploded')`, check},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tx := storetest.SQL(t, st).Begin()
			defer tx.Rollback(ctx)
			_, err := tx.Exec(ctx, tc.sql)
			var pgErr *pgconn.PgError
			if !errors.As(err, &pgErr) || pgErr.Code != tc.code {
				t.Fatalf("want SQLSTATE %s, got %v", tc.code, err)
			}
		})
	}
}

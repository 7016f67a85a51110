package store

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AgentView is one agent as another agent of the workspace sees it.
type AgentView struct {
	ConnectionID  int64
	Handle        string
	DisplayName   string
	SenderSlug    string
	Presence      string
	SharesProject bool
	Status        Status
	// OverlapsYou is true when the agent shares a project with the caller and
	// is on the same repository and branch (the collision radar, radar.go).
	OverlapsYou bool
}

// listAgentsSQL is ListAgents' statement: $1 the workspace, $2 the caller.
var listAgentsSQL = `
		SELECT p.connection_id, p.handle, p.display_name, coalesce(c.sender_slug, ''), c.last_seen_at, now(),
			v.shares,
			CASE WHEN v.shares THEN st.repo END,
			CASE WHEN v.shares THEN st.branch END,
			CASE WHEN v.shares THEN st.task END,
			CASE WHEN v.shares THEN st.updated_at END,
			v.shares AND p.connection_id <> $2 AND coalesce(` + overlapSQL("me", "st") + `, false)
		FROM agent_profiles p
		JOIN connections c ON c.workspace_id = $1 AND c.id = p.connection_id AND c.revoked_at IS NULL
		LEFT JOIN statuses st ON st.connection_id = p.connection_id
		LEFT JOIN statuses me ON me.connection_id = $2
		CROSS JOIN LATERAL (SELECT p.connection_id = $2 OR EXISTS (
			SELECT 1 FROM project_seats mine JOIN project_seats theirs ON theirs.project_id = mine.project_id
			WHERE mine.workspace_id = $1 AND mine.connection_id = $2 AND theirs.connection_id = p.connection_id) OFFSET 0) AS v(shares)
		WHERE p.workspace_id = $1
		ORDER BY p.handle`

// ListAgents returns every agent of the caller's workspace, by handle, with its presence tier. The
// statement itself leaves out what an agent works on unless it shares a project with the caller, so
// that status never leaves the database. The connections are read by the workspace's key (the
// generic plan scanned every workspace's), and OFFSET 0 keeps v.shares one value a row: pulled up,
// each of its six uses was a subplan of its own.
func (s *Store) ListAgents(ctx context.Context, workspaceID, callerConnectionID int64) ([]AgentView, error) {
	rows, err := s.pool.Query(ctx, listAgentsSQL, workspaceID, callerConnectionID)
	if err != nil {
		return nil, fmt.Errorf("store: list agents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (AgentView, error) {
		var a AgentView
		var lastSeen *time.Time
		var now time.Time
		err := r.Scan(&a.ConnectionID, &a.Handle, &a.DisplayName, &a.SenderSlug, &lastSeen, &now, &a.SharesProject,
			&a.Status.Repo, &a.Status.Branch, &a.Status.Task, &a.Status.UpdatedAt, &a.OverlapsYou)
		a.Presence = PresenceTier(lastSeen, false, now)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list agents: %w", err)
	}
	return out, nil
}

// InvitedSession is a session a connection is invited to, with its role.
type InvitedSession struct {
	Session
	ProjectName string
	Role        string
}

// ListInvitedSessions returns the sessions the connection is invited to,
// newest first.
func (s *Store) ListInvitedSessions(ctx context.Context, workspaceID, connectionID int64) ([]InvitedSession, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+sessionColumns+`, pr.name, i.role
		FROM invitations i
		JOIN sessions s ON s.id = i.session_id AND s.workspace_id = i.workspace_id
		JOIN projects pr ON pr.id = s.project_id
		WHERE i.workspace_id = $1 AND i.connection_id = $2
		ORDER BY s.id DESC`, workspaceID, connectionID)
	if err != nil {
		return nil, fmt.Errorf("store: list invited sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (InvitedSession, error) {
		var session InvitedSession
		err := r.Scan(&session.ID, &session.WorkspaceID, &session.ProjectID, &session.Type, &session.PublicID, &session.Title, &session.LastEventSeq,
			&session.CreatedAt, &session.UpdatedAt, &session.ProjectName, &session.Role)
		return session, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list invited sessions: %w", err)
	}
	return out, nil
}

// Participant is a connection invited to a session, as agents see it.
type Participant struct {
	Handle      *string
	DisplayName *string
	SenderSlug  *string
	Role        string
	Presence    string
}

// SessionState is what an invited agent may know about a session.
type SessionState struct {
	InvitedSession
	Participants []Participant
}

// readSessionStateSQL finds the session and its project first, planned apart
// (OFFSET 0): joined with the participants, the generic plan read the
// project once for each of them.
var readSessionStateSQL = `
	SELECT ` + sessionColumns + `, s.project_name, i.role, x.handle, x.display_name, x.sender_slug, x.role, x.last_seen_at, x.revoked, now()
	FROM (SELECT s.*, pr.name AS project_name FROM sessions s JOIN projects pr ON pr.id = s.project_id
		WHERE s.workspace_id = $1 AND s.session_type = $2 AND s.public_id = $3 OFFSET 0) s
	LEFT JOIN invitations i ON i.session_id = s.id AND i.connection_id = $4
	LEFT JOIN LATERAL (
		SELECT p.handle, p.display_name, c.sender_slug, pi.role, c.last_seen_at, c.revoked_at IS NOT NULL AS revoked, c.id
		FROM invitations pi
		JOIN connections c ON c.id = pi.connection_id
		LEFT JOIN agent_profiles p ON p.connection_id = pi.connection_id
		WHERE i.role IS NOT NULL AND pi.workspace_id = s.workspace_id AND pi.session_id = s.id
	) x ON true
	ORDER BY x.handle NULLS LAST, x.id`

// ReadSessionState returns a session the connection is invited to, its role
// and the session's participants, in one statement. ErrNotFound: no such
// session in the workspace; ErrForbidden: not invited.
func (s *Store) ReadSessionState(ctx context.Context, workspaceID, connectionID int64, sessionType, publicID string) (*SessionState, error) {
	rows, err := s.pool.Query(ctx, readSessionStateSQL, workspaceID, sessionType, publicID, connectionID)
	if err != nil {
		return nil, fmt.Errorf("store: read session state: %w", err)
	}
	defer rows.Close()
	var st *SessionState
	for rows.Next() {
		session := InvitedSession{}
		var role, partRole *string
		var p Participant
		var lastSeen *time.Time
		var revoked *bool
		var now time.Time
		if err := rows.Scan(&session.ID, &session.WorkspaceID, &session.ProjectID, &session.Type, &session.PublicID, &session.Title,
			&session.LastEventSeq, &session.CreatedAt, &session.UpdatedAt, &session.ProjectName, &role,
			&p.Handle, &p.DisplayName, &p.SenderSlug, &partRole, &lastSeen, &revoked, &now); err != nil {
			return nil, fmt.Errorf("store: read session state: %w", err)
		}
		if role == nil {
			return nil, wrap("read session state", ErrForbidden)
		}
		if st == nil {
			session.Role = *role
			st = &SessionState{InvitedSession: session}
		}
		if partRole != nil {
			p.Role = *partRole
			p.Presence = PresenceTier(lastSeen, *revoked, now)
			st.Participants = append(st.Participants, p)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: read session state: %w", err)
	}
	if st == nil {
		return nil, wrap("read session state", ErrNotFound)
	}
	return st, nil
}

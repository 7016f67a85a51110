package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// SessionTypes are the three kinds of session, as agents name them.
var SessionTypes = []string{"agent_session", "team_session", "loop_session"}

// Invitation roles.
const (
	RoleContributor = "contributor"
	RoleRunner      = "runner"
)

// Session is a body of conversation in a project, addressed by agents as
// (Type, PublicID).
type Session struct {
	ID           int64
	WorkspaceID  int64
	ProjectID    int64
	Type         string
	PublicID     string
	Title        string
	LastEventSeq int64
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// NewSession is the input of CreateSession.
type NewSession struct {
	WorkspaceID int64
	ProjectID   int64
	Type        string
	Title       string
	// PublicID is the opaque id agents use; generated when empty.
	PublicID  string
	CreatedBy int64
}

// MaxTitleLen bounds a session's title, in characters.
const MaxTitleLen = 200

// Validate trims and checks the fields of a new session.
func (n *NewSession) Validate() error {
	n.Title = strings.TrimSpace(n.Title)
	if !slices.Contains(SessionTypes, n.Type) {
		return &FieldError{"session_type", "choose " + orList(SessionTypes)}
	}
	if n.Title == "" || utf8.RuneCountInString(n.Title) > MaxTitleLen {
		return &FieldError{"title", fmt.Sprintf("enter a title of 1 to %d characters", MaxTitleLen)}
	}
	return nil
}

func orList(values []string) string {
	if len(values) < 2 {
		return strings.Join(values, "")
	}
	return strings.Join(values[:len(values)-1], ", ") + " or " + values[len(values)-1]
}

func newPublicID() string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	return "s_" + base64.RawURLEncoding.EncodeToString(b)
}

const sessionColumns = `s.id, s.workspace_id, s.project_id, s.session_type, s.public_id, s.title, s.last_event_seq, s.created_at, s.updated_at`

func scanSession(row pgx.Row) (*Session, error) {
	session := &Session{}
	err := row.Scan(&session.ID, &session.WorkspaceID, &session.ProjectID, &session.Type, &session.PublicID, &session.Title, &session.LastEventSeq, &session.CreatedAt, &session.UpdatedAt)
	return session, err
}

// CreateSession adds a session to a project of the workspace.
func (s *Store) CreateSession(ctx context.Context, n NewSession) (*Session, error) {
	return s.createSessionIn(ctx, s.pool, n)
}

func (s *Store) createSessionIn(ctx context.Context, q querier, n NewSession) (*Session, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	if n.PublicID == "" {
		n.PublicID = newPublicID()
	}
	var createdBy *int64
	if n.CreatedBy != 0 {
		createdBy = &n.CreatedBy
	}
	session, err := scanSession(q.QueryRow(ctx, `
		INSERT INTO sessions AS s (workspace_id, project_id, session_type, public_id, title, created_by)
		SELECT p.workspace_id, p.id, $3, $4, $5, $6 FROM projects p WHERE p.workspace_id = $1 AND p.id = $2
		RETURNING `+sessionColumns, n.WorkspaceID, n.ProjectID, n.Type, n.PublicID, n.Title, createdBy))
	if isUniqueViolation(err, "") {
		return nil, fmt.Errorf("store: create session: %w", ErrConflict)
	}
	if err != nil {
		return nil, wrap("create session", err)
	}
	return session, nil
}

// GetSession returns a session of the workspace by its internal id.
func (s *Store) GetSession(ctx context.Context, workspaceID, id int64) (*Session, error) {
	session, err := scanSession(s.pool.QueryRow(ctx, `
		SELECT `+sessionColumns+` FROM sessions s WHERE s.workspace_id = $1 AND s.id = $2`, workspaceID, id))
	if err != nil {
		return nil, wrap("get session", err)
	}
	return session, nil
}

// ListProjectSessions returns the sessions of the workspace's projects by project, the newest first
// in each.
func (s *Store) ListProjectSessions(ctx context.Context, workspaceID int64) (map[int64][]Session, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+sessionColumns+` FROM sessions s WHERE s.workspace_id = $1 ORDER BY s.project_id, s.id DESC`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("store: list project sessions: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (Session, error) {
		session, err := scanSession(r)
		return *session, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list project sessions: %w", err)
	}
	out := map[int64][]Session{}
	for _, session := range list {
		out[session.ProjectID] = append(out[session.ProjectID], session)
	}
	return out, nil
}

// Invite invites a connection to a session as contributor or runner, or
// changes its role, and appends a resource event, in one transaction.
func (s *Store) Invite(ctx context.Context, workspaceID, sessionID, connectionID int64, role string) error {
	if role != RoleContributor && role != RoleRunner {
		return &FieldError{"role", "choose contributor or runner"}
	}
	err := s.inTx(ctx, func(tx pgx.Tx) error { return invite(ctx, tx, workspaceID, sessionID, connectionID, role, false) })
	if err != nil {
		return wrap("invite", err)
	}
	return nil
}

func invite(ctx context.Context, tx pgx.Tx, workspaceID, sessionID, connectionID int64, role string, keepRole bool) error {
	conflict := `DO UPDATE SET role = EXCLUDED.role`
	if keepRole {
		conflict = `DO NOTHING`
	}
	var inserted bool
	err := tx.QueryRow(ctx, `
		INSERT INTO invitations (workspace_id, session_id, connection_id, role)
		SELECT $1, s.id, c.id, $4 FROM sessions s, connections c
		WHERE s.workspace_id = $1 AND s.id = $2 AND c.workspace_id = $1 AND c.id = $3 AND c.revoked_at IS NULL
		ON CONFLICT (session_id, connection_id) `+conflict+`
		RETURNING (xmax = 0)`, workspaceID, sessionID, connectionID, role).Scan(&inserted)
	if err != nil {
		return err
	}
	kind := "participant_updated"
	if inserted {
		kind = "participant_invited"
	}
	_, err = appendEvent(ctx, tx, sessionID, kind, nil, map[string]any{"connection_id": connectionID, "role": role})
	return err
}

// RemoveInvitation removes a connection from a session.
func (s *Store) RemoveInvitation(ctx context.Context, workspaceID, sessionID, connectionID int64) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error { return removeInvitation(ctx, tx, workspaceID, sessionID, connectionID) })
	if err != nil {
		return wrap("remove invitation", err)
	}
	return nil
}

func removeInvitation(ctx context.Context, tx pgx.Tx, workspaceID, sessionID, connectionID int64) error {
	tag, err := tx.Exec(ctx, `DELETE FROM invitations WHERE workspace_id = $1 AND session_id = $2 AND connection_id = $3`,
		workspaceID, sessionID, connectionID)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return pgx.ErrNoRows
	}
	_, err = appendEvent(ctx, tx, sessionID, "participant_removed", nil, map[string]any{"connection_id": connectionID})
	return err
}

// InvitationRole returns the connection's role in the session, or ErrNotFound
// when it is not invited.
func (s *Store) InvitationRole(ctx context.Context, workspaceID, sessionID, connectionID int64) (string, error) {
	var role string
	err := s.pool.QueryRow(ctx, `
		SELECT role FROM invitations WHERE workspace_id = $1 AND session_id = $2 AND connection_id = $3`,
		workspaceID, sessionID, connectionID).Scan(&role)
	if err != nil {
		return "", wrap("invitation role", err)
	}
	return role, nil
}

// SessionSummary is a session as the project page lists it.
type SessionSummary struct {
	Session
	// Participants are the invited agents' handles (or client names).
	Participants []string
	LastNoteAt   *time.Time
	// Unread counts the notes the owner has not seen (their own excluded),
	// up to MaxUnreadCounted (shown as "99+").
	Unread int
}

var listSessionSummariesSQL = `
		SELECT ` + sessionColumns + `,
			ARRAY(SELECT coalesce(p.handle, c.client_name) FROM invitations i
				JOIN connections c ON c.id = i.connection_id
				LEFT JOIN agent_profiles p ON p.connection_id = c.id
				WHERE i.session_id = s.id ORDER BY 1),
			` + newestNoteAt("s.id") + `,
			` + unreadCount("$3", "s.id") + `
		FROM sessions s
		WHERE s.workspace_id = $1 AND s.project_id = $2 ORDER BY s.id DESC`

// ListSessionSummaries returns a project's sessions, newest first, with
// participants, newest note time and the owner's unread count.
func (s *Store) ListSessionSummaries(ctx context.Context, workspaceID, projectID, ownerID int64) ([]SessionSummary, error) {
	rows, err := s.pool.Query(ctx, listSessionSummariesSQL, workspaceID, projectID, ownerID)
	if err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SessionSummary, error) {
		var summary SessionSummary
		err := r.Scan(&summary.ID, &summary.WorkspaceID, &summary.ProjectID, &summary.Type, &summary.PublicID, &summary.Title, &summary.LastEventSeq, &summary.CreatedAt, &summary.UpdatedAt,
			&summary.Participants, &summary.LastNoteAt, &summary.Unread)
		return summary, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list sessions: %w", err)
	}
	return out, nil
}

// SessionParticipant is a connection invited to a session.
type SessionParticipant struct {
	ConnectionID int64
	Role         string
	ClientName   string
	// Handle and DisplayName are empty until the agent claims a profile.
	Handle      string
	DisplayName string
	SenderSlug  string
	Revoked     bool
	InvitedAt   time.Time
}

// ListParticipants returns the connections invited to a session of the
// workspace, by handle.
func (s *Store) ListParticipants(ctx context.Context, workspaceID, sessionID int64) ([]SessionParticipant, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, i.role, c.client_name, coalesce(p.handle, ''), coalesce(p.display_name, ''), coalesce(c.sender_slug, ''),
			c.revoked_at IS NOT NULL, i.created_at
		FROM invitations i JOIN connections c ON c.id = i.connection_id
		LEFT JOIN agent_profiles p ON p.connection_id = c.id
		WHERE i.workspace_id = $1 AND i.session_id = $2
		ORDER BY p.handle NULLS LAST, c.id`, workspaceID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: list participants: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SessionParticipant, error) {
		var participant SessionParticipant
		err := r.Scan(&participant.ConnectionID, &participant.Role, &participant.ClientName, &participant.Handle, &participant.DisplayName, &participant.SenderSlug, &participant.Revoked, &participant.InvitedAt)
		return participant, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list participants: %w", err)
	}
	return out, nil
}

// InvitableConnection is a live connection of the workspace an owner may
// invite to a session.
type InvitableConnection struct {
	ConnectionID int64
	ClientName   string
	Handle       string
	DisplayName  string
}

// ListInvitableConnections returns the workspace's live connections not yet
// invited to the session, claimed profiles first by handle.
func (s *Store) ListInvitableConnections(ctx context.Context, workspaceID, sessionID int64) ([]InvitableConnection, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, c.client_name, coalesce(p.handle, ''), coalesce(p.display_name, '')
		FROM connections c LEFT JOIN agent_profiles p ON p.connection_id = c.id
		WHERE c.workspace_id = $1 AND c.revoked_at IS NULL
			AND NOT EXISTS (SELECT 1 FROM invitations i WHERE i.session_id = $2 AND i.connection_id = c.id)
		ORDER BY p.handle NULLS LAST, c.id`, workspaceID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("store: list invitable connections: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[InvitableConnection])
	if err != nil {
		return nil, fmt.Errorf("store: list invitable connections: %w", err)
	}
	return out, nil
}

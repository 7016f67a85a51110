package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Project is a body of work in a workspace.
type Project struct {
	ID          int64
	WorkspaceID int64
	Name        string
	CreatedAt   time.Time
}

// MaxProjectNameLen bounds a project's name, in characters.
const MaxProjectNameLen = 100

// ValidateProjectName trims and checks a project name.
func ValidateProjectName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > MaxProjectNameLen {
		return "", &FieldError{"name", fmt.Sprintf("enter a project name of 1 to %d characters", MaxProjectNameLen)}
	}
	return name, nil
}

// CreateProject adds a project to the workspace.
func (s *Store) CreateProject(ctx context.Context, workspaceID int64, name string) (*Project, error) {
	return s.createProjectIn(ctx, s.pool, workspaceID, name)
}

func (s *Store) createProjectIn(ctx context.Context, q querier, workspaceID int64, name string) (*Project, error) {
	name, err := ValidateProjectName(name)
	if err != nil {
		return nil, err
	}
	p := &Project{WorkspaceID: workspaceID, Name: name}
	err = q.QueryRow(ctx, `
		INSERT INTO projects (workspace_id, name) VALUES ($1, $2) RETURNING id, created_at`,
		workspaceID, name).Scan(&p.ID, &p.CreatedAt)
	if isUniqueViolation(err, "") {
		return nil, &FieldError{"name", "a project with this name already exists"}
	}
	if err != nil {
		return nil, fmt.Errorf("store: create project: %w", err)
	}
	return p, nil
}

// ListProjects returns the workspace's projects by name.
func (s *Store) ListProjects(ctx context.Context, workspaceID int64) ([]Project, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT id, workspace_id, name, created_at FROM projects
		WHERE workspace_id = $1 ORDER BY lower(name), id`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("store: list projects: %w", err)
	}
	defer rows.Close()
	var out []Project
	for rows.Next() {
		var p Project
		if err := rows.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt); err != nil {
			return nil, fmt.Errorf("store: list projects: %w", err)
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// GetProject returns a project of the workspace, or ErrNotFound.
func (s *Store) GetProject(ctx context.Context, workspaceID, id int64) (*Project, error) {
	p := &Project{}
	err := s.pool.QueryRow(ctx, `
		SELECT id, workspace_id, name, created_at FROM projects
		WHERE workspace_id = $1 AND id = $2`, workspaceID, id).Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt)
	if err != nil {
		return nil, wrap("get project", err)
	}
	return p, nil
}

// RenameProject changes a project's name.
func (s *Store) RenameProject(ctx context.Context, workspaceID, id int64, name string) (*Project, error) {
	return s.renameProjectIn(ctx, s.pool, workspaceID, id, name)
}

func (s *Store) renameProjectIn(ctx context.Context, q querier, workspaceID, id int64, name string) (*Project, error) {
	name, err := ValidateProjectName(name)
	if err != nil {
		return nil, err
	}
	p := &Project{}
	err = q.QueryRow(ctx, `
		UPDATE projects SET name = $3 WHERE workspace_id = $1 AND id = $2
		RETURNING id, workspace_id, name, created_at`, workspaceID, id, name).Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt)
	if isUniqueViolation(err, "") {
		return nil, &FieldError{"name", "a project with this name already exists"}
	}
	if err != nil {
		return nil, wrap("rename project", err)
	}
	return p, nil
}

// ProjectSummary is a project with the counts the projects list shows.
type ProjectSummary struct {
	Project
	Sessions   int
	Agents     int
	LastNoteAt *time.Time
	// Unread counts notes of the project's sessions the owner has not seen,
	// each session's up to MaxUnreadCounted (shown as "99+" from there).
	Unread int
}

var listProjectSummariesSQL = `
		SELECT p.id, p.workspace_id, p.name, p.created_at,
			(SELECT count(*) FROM sessions s WHERE s.project_id = p.id),
			(SELECT count(*) FROM project_seats ps JOIN connections c ON c.id = ps.connection_id AND c.revoked_at IS NULL
				WHERE ps.project_id = p.id),
			(SELECT max(` + newestNoteAt("s.id") + `) FROM sessions s WHERE s.project_id = p.id),
			(SELECT coalesce(sum(` + unreadCount("$2", "s.id") + `), 0)::int FROM sessions s
				WHERE s.project_id = p.id AND ` + anyUnreadBy("$2", "s.id") + `)
		FROM projects p WHERE p.workspace_id = $1 ORDER BY lower(p.name), p.id`

// ListProjectSummaries returns the workspace's projects by name, with their
// session and seat counts, newest note time and the owner's unread count.
func (s *Store) ListProjectSummaries(ctx context.Context, workspaceID, ownerID int64) ([]ProjectSummary, error) {
	rows, err := s.pool.Query(ctx, listProjectSummariesSQL, workspaceID, ownerID)
	if err != nil {
		return nil, fmt.Errorf("store: list projects: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (ProjectSummary, error) {
		var p ProjectSummary
		err := r.Scan(&p.ID, &p.WorkspaceID, &p.Name, &p.CreatedAt, &p.Sessions, &p.Agents, &p.LastNoteAt, &p.Unread)
		return p, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list projects: %w", err)
	}
	return out, nil
}

// SeatedAgent is a live connection seated in a project, with its agent
// profile (when claimed), presence tier and self-reported status.
type SeatedAgent struct {
	ConnectionID int64
	ClientName   string
	// Handle, DisplayName and SenderSlug are empty until the agent claims a profile.
	Handle      string
	DisplayName string
	SenderSlug  string
	Presence    string
	// Status is what the agent says it is on (self-reported); its UpdatedAt
	// is nil when it never set one.
	Status Status
	// Overlap is set when another agent seated in the project is on the same repository and branch
	// (the collision radar, radar.go).
	Overlap *string
}

// Claimed reports whether the agent has claimed a profile.
func (a *SeatedAgent) Claimed() bool { return a.Handle != "" }

// HasStatus reports whether any status field is set.
func (a *SeatedAgent) HasStatus() bool {
	return a.Status.Repo != nil || a.Status.Branch != nil || a.Status.Task != nil
}

// ListSeatedAgents returns the live connections seated in a project of the
// workspace, claimed profiles first by handle, with presence, status and
// the overlaps between them.
func (s *Store) ListSeatedAgents(ctx context.Context, workspaceID, projectID int64) ([]SeatedAgent, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, c.client_name, coalesce(p.handle, ''), coalesce(p.display_name, ''), coalesce(c.sender_slug, ''),
			c.last_seen_at, now(), st.repo, st.branch, st.task, st.updated_at,
			CASE WHEN EXISTS (SELECT 1 FROM project_seats os
				JOIN connections oc ON oc.id = os.connection_id AND oc.revoked_at IS NULL
				JOIN statuses o ON o.connection_id = os.connection_id
				WHERE os.project_id = ps.project_id AND os.connection_id <> c.id AND `+overlapSQL("st", "o")+`) THEN st.repo_key END
		FROM project_seats ps
		JOIN connections c ON c.id = ps.connection_id AND c.revoked_at IS NULL
		LEFT JOIN agent_profiles p ON p.connection_id = c.id
		LEFT JOIN statuses st ON st.connection_id = c.id
		WHERE ps.workspace_id = $1 AND ps.project_id = $2
		ORDER BY p.handle NULLS LAST, c.id`, workspaceID, projectID)
	if err != nil {
		return nil, fmt.Errorf("store: list seated agents: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (SeatedAgent, error) {
		var a SeatedAgent
		var lastSeen *time.Time
		var now time.Time
		err := r.Scan(&a.ConnectionID, &a.ClientName, &a.Handle, &a.DisplayName, &a.SenderSlug, &lastSeen, &now,
			&a.Status.Repo, &a.Status.Branch, &a.Status.Task, &a.Status.UpdatedAt, &a.Overlap)
		a.Presence = PresenceTier(lastSeen, false, now)
		return a, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list seated agents: %w", err)
	}
	return out, nil
}

// UnseatConnection removes a connection from a project.
func (s *Store) UnseatConnection(ctx context.Context, workspaceID, projectID, connectionID int64) error {
	return s.unseatConnectionIn(ctx, s.pool, workspaceID, projectID, connectionID)
}

func (s *Store) unseatConnectionIn(ctx context.Context, q querier, workspaceID, projectID, connectionID int64) error {
	tag, err := q.Exec(ctx, `
		DELETE FROM project_seats WHERE workspace_id = $1 AND project_id = $2 AND connection_id = $3`,
		workspaceID, projectID, connectionID)
	if err != nil {
		return fmt.Errorf("store: unseat connection: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: unseat connection: %w", ErrNotFound)
	}
	return nil
}

// SeatAgentByHandle seats the agent that claimed handle in a project of the
// workspace. An unknown handle is a FieldError; seating twice is harmless.
func (s *Store) SeatAgentByHandle(ctx context.Context, workspaceID, projectID int64, handle string) error {
	return s.seatAgentByHandleIn(ctx, s.pool, workspaceID, projectID, handle)
}

func (s *Store) seatAgentByHandleIn(ctx context.Context, q querier, workspaceID, projectID int64, handle string) error {
	handle = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(handle), "@")))
	if handle == "" {
		return &FieldError{"handle", "enter the handle the agent claimed"}
	}
	// An unclaimed handle leaves connectionID 0, which seatConnection reports
	// after checking the project, so a missing project still reads not found.
	var connectionID int64
	err := q.QueryRow(ctx, `SELECT connection_id FROM agent_profiles WHERE workspace_id = $1 AND handle = $2`,
		workspaceID, handle).Scan(&connectionID)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("store: seat agent: %w", err)
	}
	err = seatConnection(ctx, s.pool, workspaceID, connectionID, []int64{projectID})
	switch {
	case errors.Is(err, errNoSuchConnection):
		return &FieldError{"handle", "no agent in this workspace has claimed that handle"}
	case err != nil:
		return fmt.Errorf("store: seat agent: %w", err)
	}
	return nil
}

var errNoSuchConnection = fmt.Errorf("connection: %w", ErrNotFound)

func seatConnection(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, workspaceID, connectionID int64, projectIDs []int64) error {
	if len(projectIDs) == 0 {
		return nil
	}
	var connected bool
	var missing []int64
	err := q.QueryRow(ctx, `
		WITH c AS (SELECT id FROM connections WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL),
		p AS (SELECT id FROM projects WHERE workspace_id = $1 AND id = ANY($3::bigint[])),
		missing AS (SELECT unnest($3::bigint[]) AS id EXCEPT SELECT id FROM p),
		seat AS (INSERT INTO project_seats (workspace_id, project_id, connection_id)
			SELECT $1, p.id, c.id FROM p, c WHERE NOT EXISTS (SELECT 1 FROM missing)
			ON CONFLICT DO NOTHING)
		SELECT EXISTS (SELECT 1 FROM c), ARRAY(SELECT id FROM missing ORDER BY id)`,
		workspaceID, connectionID, projectIDs).Scan(&connected, &missing)
	switch {
	case err != nil:
		return err
	case len(missing) > 0:
		return fmt.Errorf("project %d: %w", missing[0], ErrNotFound)
	case !connected:
		return errNoSuchConnection
	}
	return nil
}

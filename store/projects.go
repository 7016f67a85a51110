package store

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// Project is a body of work in a workspace.
type Project struct {
	ID          int64
	WorkspaceID int64
	Name        string
	CreatedAt   time.Time
}

// ValidateProjectName trims and checks a project name.
func ValidateProjectName(name string) (string, error) {
	name = strings.TrimSpace(name)
	if name == "" || utf8.RuneCountInString(name) > 100 {
		return "", &FieldError{"name", "enter a project name of 1 to 100 characters"}
	}
	return name, nil
}

// CreateProject adds a project to the workspace.
func (s *Store) CreateProject(ctx context.Context, workspaceID int64, name string) (*Project, error) {
	name, err := ValidateProjectName(name)
	if err != nil {
		return nil, err
	}
	p := &Project{WorkspaceID: workspaceID, Name: name}
	err = s.pool.QueryRow(ctx, `
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

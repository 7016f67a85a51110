package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Role is what a person may do in their workspace.
type Role string

// The roles, each allowed all that the next one is.
const (
	// RoleAdmin manages people and roles, connections, webhooks and
	// project settings, and does all a member does.
	RoleAdmin Role = "admin"
	// RoleMember reads everything, writes notes and replies, answers
	// questions, invites agents to sessions and exports.
	RoleMember Role = "member"
	// RoleViewer reads everything and exports.
	RoleViewer Role = "viewer"
)

// Roles lists the roles, the most able first.
var Roles = []Role{RoleAdmin, RoleMember, RoleViewer}

func (r Role) rank() int {
	switch r {
	case RoleAdmin:
		return 3
	case RoleMember:
		return 2
	case RoleViewer:
		return 1
	}
	return 0
}

// May reports whether a person of role r may do what needs role need.
func (r Role) May(need Role) bool { return r.rank() > 0 && r.rank() >= need.rank() }

// ParseRole reads a role from a form or a flag, refused as field.
func ParseRole(field, s string) (Role, error) {
	if r := Role(s); r.rank() > 0 {
		return r, nil
	}
	return "", &FieldError{field, "choose admin, member or viewer"}
}

// RoleError is the refusal of an action the person's role does not allow,
// or of a person no longer in the workspace. It is ErrForbidden, and its
// text is the sentence the person reads.
type RoleError struct {
	Need Role
	// Have is the person's role; empty when they were removed.
	Have Role
}

func (e *RoleError) Error() string {
	switch {
	case e.Have == "":
		return "You are no longer a member of this workspace."
	case e.Need == RoleAdmin:
		return fmt.Sprintf("Only admins can do this; your role is %s.", e.Have)
	}
	return fmt.Sprintf("Your role is %s: you can read and export, not write or answer.", e.Have)
}

// Unwrap makes errors.Is(err, ErrForbidden) true.
func (e *RoleError) Unwrap() error { return ErrForbidden }

// Actor is a person acting in their workspace, and where from: what the
// audit log records of them.
type Actor struct {
	OwnerID     int64
	WorkspaceID int64
	// RemoteAddr and UserAgent are the browser's, as the request gave them.
	RemoteAddr string
	UserAgent  string
}

type action struct {
	tx      pgx.Tx
	actor   Actor
	name    string
	role    Role
	records []AuditEntry
	notify  []notification
}

func (ac *action) audit(kind AuditKind, projectID int64, subject string, detail map[string]any) {
	e := AuditEntry{Kind: kind, Subject: subject, Detail: detail}
	if projectID != 0 {
		e.ProjectID = &projectID
	}
	ac.records = append(ac.records, e)
}

// act runs one action of a person: in one transaction it checks that they are still in their
// workspace with a role that may do it (the row locked FOR SHARE, so that a demotion or removal
// waits for the action, or the action for it), runs fn, and writes the audit rows fn recorded.
func (s *Store) act(ctx context.Context, a Actor, need Role, fn func(ac *action) error) error {
	var notify []notification
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		ac := &action{tx: tx, actor: a}
		var err error
		if ac.name, ac.role, err = checkRole(ctx, tx, a.WorkspaceID, a.OwnerID, need); err != nil {
			return err
		}
		if err := fn(ac); err != nil {
			return err
		}
		for _, e := range ac.records {
			if err := insertAudit(ctx, tx, a, ac.name, e); err != nil {
				return err
			}
		}
		notify = ac.notify
		return nil
	})
	if err != nil {
		return err
	}
	s.notifyAfterCommit(notify...)
	return nil
}

// checkRole is the one role check of a write, inside its transaction.
func checkRole(ctx context.Context, tx pgx.Tx, workspaceID, ownerID int64, need Role) (string, Role, error) {
	var name string
	var role Role
	var removed bool
	err := tx.QueryRow(ctx, `
		SELECT display_name, role, removed_at IS NOT NULL FROM owners
		WHERE id = $1 AND workspace_id = $2 FOR SHARE`, ownerID, workspaceID).Scan(&name, &role, &removed)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return "", "", ErrNotFound
	case err != nil:
		return "", "", err
	case removed:
		return "", "", &RoleError{Need: need}
	case !role.May(need):
		return "", "", &RoleError{Need: need, Have: role}
	}
	return name, role, nil
}

type querier interface {
	QueryRow(context.Context, string, ...any) pgx.Row
	Query(context.Context, string, ...any) (pgx.Rows, error)
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}

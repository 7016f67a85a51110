package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Person is one person of a workspace, as the People page lists them.
type Person struct {
	ID          int64
	Email       string
	DisplayName string
	Role        Role
	CreatedAt   time.Time
	// LastSeenAt is their newest sign-in's last use; nil when signed out.
	LastSeenAt *time.Time
}

// ErrLastAdmin refuses what would leave a workspace without an admin.
var ErrLastAdmin = &FieldError{"role", "this is the workspace's last admin: make someone else an admin first"}

// ListPeople returns the people of the actor's workspace by name; admins only.
func (s *Store) ListPeople(ctx context.Context, a Actor) ([]Person, error) {
	var out []Person
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		rows, err := ac.tx.Query(ctx, `
			SELECT o.id, o.email, o.display_name, o.role, o.created_at,
				(SELECT max(si.last_seen_at) FROM sign_ins si WHERE si.owner_id = o.id AND `+signInLive+`)
			FROM owners o WHERE o.workspace_id = $1 AND o.removed_at IS NULL
			ORDER BY lower(o.display_name), o.id`, a.WorkspaceID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (Person, error) {
			var p Person
			err := r.Scan(&p.ID, &p.Email, &p.DisplayName, &p.Role, &p.CreatedAt, &p.LastSeenAt)
			return p, err
		})
		return err
	})
	if err != nil {
		return nil, wrapAct("list people", err)
	}
	return out, nil
}

func wrapAct(op string, err error) error {
	if err == nil {
		return nil
	}
	var re *RoleError
	var fe *FieldError
	if errors.As(err, &re) || errors.As(err, &fe) {
		return err
	}
	return wrap(op, err)
}

// lockAdmins locks the admin rows of the workspace and says how many there
// are, so that of two changes that would each leave one admin, the second
// sees the first.
func lockAdmins(ctx context.Context, tx pgx.Tx, workspaceID int64) (int, error) {
	rows, err := tx.Query(ctx, `SELECT id FROM owners WHERE workspace_id = $1 AND role = 'admin' AND removed_at IS NULL FOR UPDATE`, workspaceID)
	if err != nil {
		return 0, err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int64])
	return len(ids), err
}

// SetRole changes a person's role; admins only. The last admin cannot be
// demoted (ErrLastAdmin); the person's pages follow at their next request.
func (s *Store) SetRole(ctx context.Context, a Actor, personID int64, role Role) error {
	if _, err := ParseRole("role", string(role)); err != nil {
		return err
	}
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		admins, err := lockAdmins(ctx, ac.tx, a.WorkspaceID)
		if err != nil {
			return err
		}
		var was Role
		var name string
		err = ac.tx.QueryRow(ctx, `SELECT role, display_name FROM owners WHERE id = $1 AND workspace_id = $2 AND removed_at IS NULL FOR UPDATE`,
			personID, a.WorkspaceID).Scan(&was, &name)
		if err != nil {
			return err
		}
		if was == role {
			return nil
		}
		if was == RoleAdmin && admins <= 1 {
			return ErrLastAdmin
		}
		if _, err := ac.tx.Exec(ctx, `UPDATE owners SET role = $2 WHERE id = $1`, personID, string(role)); err != nil {
			return err
		}
		ac.audit(AuditRoleChanged, 0, fmt.Sprintf("%s: %s → %s", name, was, role), map[string]any{"person_id": personID, "from": was, "to": role})
		ac.notify = append(ac.notify, PersonTopic.notification(personID))
		return nil
	})
	if err != nil {
		return wrapAct("set role", err)
	}
	return nil
}

// RemovePerson removes a person from the actor's workspace.
func (s *Store) RemovePerson(ctx context.Context, a Actor, personID int64) error {
	var revoked []int64
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		admins, err := lockAdmins(ctx, ac.tx, a.WorkspaceID)
		if err != nil {
			return err
		}
		var role Role
		var name, email string
		err = ac.tx.QueryRow(ctx, `
			UPDATE owners o SET removed_at = now()
			WHERE o.id = $1 AND o.workspace_id = $2 AND o.removed_at IS NULL
			RETURNING o.role, o.display_name, o.email`, personID, a.WorkspaceID).Scan(&role, &name, &email)
		if err != nil {
			return err
		}
		if role == RoleAdmin && admins <= 1 {
			return ErrLastAdmin
		}
		ended, err := endSignIns(ctx, ac.tx, `owner_id = $1`, personID)
		if err != nil {
			return err
		}
		rows, err := ac.tx.Query(ctx, `SELECT id FROM connections WHERE workspace_id = $1 AND owner_id = $2 AND revoked_at IS NULL`, a.WorkspaceID, personID)
		if err != nil {
			return err
		}
		if revoked, err = pgx.CollectRows(rows, pgx.RowTo[int64]); err != nil {
			return err
		}
		for _, id := range revoked {
			if err := revokeConnection(ctx, ac.tx, a.WorkspaceID, id); err != nil {
				return err
			}
		}
		for _, q := range []string{
			`INSERT INTO owner_mail_settings (owner_id, workspace_id, questions, replies, digest) VALUES ($1, $2, false, false, false)
			 ON CONFLICT (owner_id) DO UPDATE SET questions = false, replies = false, digest = false, digest_due_at = NULL`,
			`DELETE FROM answer_links WHERE owner_id = $1 AND workspace_id = $2`,
		} {
			if _, err := ac.tx.Exec(ctx, q, personID, a.WorkspaceID); err != nil {
				return err
			}
		}
		ac.audit(AuditPersonRemoved, 0, name+" <"+email+">", map[string]any{"person_id": personID, "role": role,
			"sign_ins_ended": len(ended), "connections_revoked": len(revoked)})
		for _, id := range ended {
			ac.notify = append(ac.notify, SignOutTopic.notification(id))
		}
		ac.notify = append(ac.notify, PersonTopic.notification(personID))
		return nil
	})
	if err != nil {
		return wrapAct("remove person", err)
	}
	return nil
}

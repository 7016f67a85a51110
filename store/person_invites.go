package store

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/mail"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// PersonInviteLifetime is how long an invitation link works.
const PersonInviteLifetime = 7 * 24 * time.Hour

const personInviteSecret = "person_invites"

// Refusals of an invitation link, each a sentence the page shows.
var (
	ErrInviteInvalid = errors.New("this invitation link is not valid: ask for a new one")
	ErrInviteExpired = errors.New("this invitation has expired: ask the person who invited you for a new one")
	ErrInviteUsed    = errors.New("this invitation was used already: sign in instead")
	ErrInviteRevoked = errors.New("this invitation was revoked")
)

// PersonInvite is one invitation of a person.
type PersonInvite struct {
	ID            int64
	WorkspaceID   int64
	WorkspaceName string
	Email         string
	Role          Role
	InvitedByName string
	CreatedAt     time.Time
	ExpiresAt     time.Time
}

func (s *Store) personInviteKey(ctx context.Context) ([]byte, error) {
	s.inviteKey.mu.Lock()
	defer s.inviteKey.mu.Unlock()
	if s.inviteKey.key == nil {
		k, err := s.ServerSecret(ctx, personInviteSecret)
		if err != nil {
			return nil, err
		}
		s.inviteKey.key = k
	}
	return s.inviteKey.key, nil
}

func signInvite(key []byte, id, workspaceID int64, email string, role Role) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "person-invite:%d:%d:%s:%s", id, workspaceID, email, role)
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// CreatePersonInvite invites email to the actor's workspace with role; admins only.
func (s *Store) CreatePersonInvite(ctx context.Context, a Actor, email string, role Role) (*PersonInvite, string, error) {
	email = NormalizeEmail(email)
	var errs []error
	if addr, err := mail.ParseAddress(email); err != nil || addr.Address != email || len(email) > 254 {
		errs = append(errs, &FieldError{"email", "enter a valid email address, like name@example.com"})
	}
	if _, err := ParseRole("role", string(role)); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, "", errors.Join(errs...)
	}
	key, err := s.personInviteKey(ctx)
	if err != nil {
		return nil, "", err
	}
	inv := &PersonInvite{WorkspaceID: a.WorkspaceID, Email: email, Role: role}
	err = s.act(ctx, a, RoleAdmin, func(ac *action) error {
		var taken bool
		if err := ac.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM owners WHERE email = $1 AND removed_at IS NULL)`, email).Scan(&taken); err != nil {
			return err
		}
		if taken {
			return &FieldError{"email", "someone with this email already has an account"}
		}
		if _, err := ac.tx.Exec(ctx, `UPDATE person_invites SET revoked_at = now()
			WHERE workspace_id = $1 AND email = $2 AND accepted_at IS NULL AND revoked_at IS NULL`, a.WorkspaceID, email); err != nil {
			return err
		}
		err := ac.tx.QueryRow(ctx, `
			INSERT INTO person_invites (workspace_id, email, role, invited_by, expires_at)
			VALUES ($1, $2, $3, $4, now() + $5 * interval '1 millisecond')
			RETURNING id, created_at, expires_at, (SELECT name FROM workspaces WHERE id = $1)`,
			a.WorkspaceID, email, string(role), a.OwnerID, PersonInviteLifetime.Milliseconds()).
			Scan(&inv.ID, &inv.CreatedAt, &inv.ExpiresAt, &inv.WorkspaceName)
		if err != nil {
			return err
		}
		inv.InvitedByName = ac.name
		ac.audit(AuditPersonInvited, 0, email+" as "+string(role), map[string]any{"invite_id": inv.ID, "email": email, "role": role})
		return nil
	})
	if err != nil {
		return nil, "", wrapAct("invite person", err)
	}
	return inv, strconv.FormatInt(inv.ID, 10) + "." + signInvite(key, inv.ID, inv.WorkspaceID, email, role), nil
}

const personInviteColumns = `i.id, i.workspace_id, w.name, i.email, i.role, coalesce(o.display_name, ''), i.created_at, i.expires_at`

const personInviteFrom = `
	FROM person_invites i JOIN workspaces w ON w.id = i.workspace_id
	LEFT JOIN owners o ON o.id = i.invited_by AND o.workspace_id = i.workspace_id`

const personInviteSelect = `SELECT ` + personInviteColumns + personInviteFrom

func scanPersonInvite(row pgx.Row, extra ...any) (*PersonInvite, error) {
	i := &PersonInvite{}
	err := row.Scan(append([]any{&i.ID, &i.WorkspaceID, &i.WorkspaceName, &i.Email, &i.Role, &i.InvitedByName, &i.CreatedAt, &i.ExpiresAt}, extra...)...)
	return i, err
}

// ListPersonInvites returns the open invitations of the actor's workspace (not accepted, revoked or
// expired), newest first.
func (s *Store) ListPersonInvites(ctx context.Context, a Actor) ([]PersonInvite, error) {
	var out []PersonInvite
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		rows, err := ac.tx.Query(ctx, personInviteSelect+`
			WHERE i.workspace_id = $1 AND i.accepted_at IS NULL AND i.revoked_at IS NULL AND i.expires_at > now()
			ORDER BY i.id DESC`, a.WorkspaceID)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, func(r pgx.CollectableRow) (PersonInvite, error) {
			i, err := scanPersonInvite(r)
			return *i, err
		})
		return err
	})
	if err != nil {
		return nil, wrapAct("list invitations", err)
	}
	return out, nil
}

// RevokePersonInvite revokes an open invitation of the actor's workspace;
// admins only. ErrNotFound when it is not open.
func (s *Store) RevokePersonInvite(ctx context.Context, a Actor, id int64) error {
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		var email string
		err := ac.tx.QueryRow(ctx, `UPDATE person_invites SET revoked_at = now()
			WHERE workspace_id = $1 AND id = $2 AND accepted_at IS NULL AND revoked_at IS NULL RETURNING email`, a.WorkspaceID, id).Scan(&email)
		if err != nil {
			return err
		}
		ac.audit(AuditInviteRevoked, 0, email, map[string]any{"invite_id": id})
		return nil
	})
	if err != nil {
		return wrapAct("revoke invitation", err)
	}
	return nil
}

// PersonInviteOf checks an invitation link's token and returns the invitation it names.
func (s *Store) PersonInviteOf(ctx context.Context, token string) (*PersonInvite, error) {
	inv, _, err := s.personInviteOf(ctx, s.pool, token)
	return inv, err
}

func (s *Store) personInviteOf(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, token string) (*PersonInvite, bool, error) {
	idText, mac, ok := strings.Cut(token, ".")
	id, err := strconv.ParseInt(idText, 10, 64)
	if !ok || err != nil || id <= 0 || len(mac) != base64.RawURLEncoding.EncodedLen(sha256.Size) {
		return nil, false, ErrInviteInvalid
	}
	key, err := s.personInviteKey(ctx)
	if err != nil {
		return nil, false, err
	}
	var accepted, revoked, expired bool
	inv, err := scanPersonInvite(q.QueryRow(ctx, `
		SELECT `+personInviteColumns+`, i.accepted_at IS NOT NULL, i.revoked_at IS NOT NULL, i.expires_at <= now()`+personInviteFrom+`
		WHERE i.id = $1`, id), &accepted, &revoked, &expired)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, ErrInviteInvalid
	}
	if err != nil {
		return nil, false, fmt.Errorf("store: invitation: %w", err)
	}
	if !hmac.Equal([]byte(mac), []byte(signInvite(key, inv.ID, inv.WorkspaceID, inv.Email, inv.Role))) {
		return nil, false, ErrInviteInvalid
	}
	switch {
	case accepted:
		return inv, false, ErrInviteUsed
	case revoked:
		return inv, false, ErrInviteRevoked
	case expired:
		return inv, false, ErrInviteExpired
	}
	return inv, true, nil
}

// AcceptPersonInvite creates the invited person with the name and password they chose (NewOwner's
// rules) and spends the invitation, in one transaction.
func (s *Store) AcceptPersonInvite(ctx context.Context, token, displayName, password string, from Actor) (*Owner, error) {
	inv, _, err := s.personInviteOf(ctx, s.pool, token)
	if err != nil {
		return nil, err
	}
	n := NewOwner{Email: inv.Email, DisplayName: displayName, Password: password, Role: inv.Role}
	if err := n.Validate(); err != nil {
		return nil, err
	}
	hash, err := s.hashPassword(ctx, n.Password)
	if err != nil {
		return nil, err
	}
	var o *Owner
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		// The one statement that spends it: open, not expired.
		var id int64
		err := tx.QueryRow(ctx, `
			SELECT id FROM person_invites WHERE id = $1 AND accepted_at IS NULL AND revoked_at IS NULL AND expires_at > now() FOR UPDATE`,
			inv.ID).Scan(&id)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if err != nil {
			_, _, err := s.personInviteOf(ctx, tx, token)
			if err == nil {
				err = ErrInviteUsed
			}
			return err
		}
		if o, err = insertOwner(ctx, tx, inv.WorkspaceID, n, hash); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE person_invites SET accepted_at = now(), accepted_by = $2 WHERE id = $1`, inv.ID, o.ID); err != nil {
			return err
		}
		from.OwnerID, from.WorkspaceID = o.ID, o.WorkspaceID
		return insertAudit(ctx, tx, from, o.DisplayName, AuditEntry{Kind: AuditPersonJoined, Subject: o.DisplayName + " <" + o.Email + "> as " + string(o.Role),
			Detail: map[string]any{"invite_id": inv.ID, "role": o.Role}})
	})
	if err != nil {
		return nil, wrapAct("accept invitation", err)
	}
	return o, nil
}

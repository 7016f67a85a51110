package store

import (
	"context"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Owner is a human account of a workspace.
type Owner struct {
	ID            int64
	WorkspaceID   int64
	WorkspaceName string
	Email         string
	DisplayName   string
	CreatedAt     time.Time
}

// NewOwner is the input for creating an owner.
type NewOwner struct {
	Email       string
	DisplayName string
	Password    string
	// WorkspaceName names the workspace to join or create (CreateOwner only).
	WorkspaceName string
}

// FieldError is a validation failure of one named input field.
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

// Unwrap makes errors.Is(err, ErrInvalid) true for every FieldError.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// NormalizeEmail lower-cases and trims an email address.
func NormalizeEmail(s string) string { return strings.ToLower(strings.TrimSpace(s)) }

// Limits of a new owner: the display name in characters, the password in
// bytes.
const (
	MaxOwnerNameLen  = 80
	MaxPasswordBytes = 1024
)

// Validate checks the fields of a new owner and normalises them in place.
func (n *NewOwner) Validate() error {
	n.Email = NormalizeEmail(n.Email)
	n.DisplayName = strings.TrimSpace(n.DisplayName)
	if a, err := mail.ParseAddress(n.Email); err != nil || a.Address != n.Email || len(n.Email) > 254 {
		return &FieldError{"email", "enter a valid email address, like name@example.com"}
	}
	if n.DisplayName == "" || utf8.RuneCountInString(n.DisplayName) > MaxOwnerNameLen {
		return &FieldError{"display_name", fmt.Sprintf("enter a name of 1 to %d characters", MaxOwnerNameLen)}
	}
	if err := CheckDisplayName("display_name", n.DisplayName); err != nil {
		return err
	}
	if utf8.RuneCountInString(n.Password) < MinPasswordLength {
		return &FieldError{"password", fmt.Sprintf("use at least %d characters", MinPasswordLength)}
	}
	if len(n.Password) > MaxPasswordBytes {
		return &FieldError{"password", fmt.Sprintf("use at most %d bytes", MaxPasswordBytes)}
	}
	return nil
}

// firstOwnerLock serialises first-run setup across replicas.
const firstOwnerLock = 0x6f73666f776e72

// HasOwner reports whether any owner exists (false on a fresh install).
func (s *Store) HasOwner(ctx context.Context) (bool, error) {
	var ok bool
	if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM owners)`).Scan(&ok); err != nil {
		return false, fmt.Errorf("store: has owner: %w", err)
	}
	return ok, nil
}

// CreateFirstOwner creates the first workspace and its owner. It fails with
// ErrConflict once any owner exists, also when two requests race.
func (s *Store) CreateFirstOwner(ctx context.Context, n NewOwner) (*Owner, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	hash, err := HashPassword(n.Password)
	if err != nil {
		return nil, err
	}
	if n.WorkspaceName == "" {
		n.WorkspaceName = "My workspace"
	}
	var o *Owner
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, firstOwnerLock); err != nil {
			return err
		}
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM owners)`).Scan(&exists); err != nil {
			return err
		}
		if exists {
			return ErrConflict
		}
		var wsID int64
		if err := tx.QueryRow(ctx, `INSERT INTO workspaces (name) VALUES ($1) RETURNING id`, n.WorkspaceName).Scan(&wsID); err != nil {
			return err
		}
		o, err = insertOwner(ctx, tx, wsID, n, hash)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create first owner: %w", err)
	}
	return o, nil
}

// CreateOwner adds an owner to the workspace named n.WorkspaceName, creating
// that workspace when it does not exist. With no name it joins the only
// workspace (or creates "My workspace" on an empty install); with several
// workspaces a name is required.
func (s *Store) CreateOwner(ctx context.Context, n NewOwner) (*Owner, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	hash, err := HashPassword(n.Password)
	if err != nil {
		return nil, err
	}
	var o *Owner
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, firstOwnerLock); err != nil {
			return err
		}
		var wsID int64
		if n.WorkspaceName == "" {
			var count int
			if err := tx.QueryRow(ctx, `SELECT count(*), coalesce(min(id), 0) FROM workspaces`).Scan(&count, &wsID); err != nil {
				return err
			}
			switch {
			case count == 0:
				n.WorkspaceName = "My workspace"
			case count > 1:
				return &FieldError{"workspace", "there are several workspaces; name the one to join"}
			}
		} else {
			err := tx.QueryRow(ctx, `SELECT id FROM workspaces WHERE name = $1 ORDER BY id LIMIT 1`, n.WorkspaceName).Scan(&wsID)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return err
			}
		}
		if wsID == 0 {
			if err := tx.QueryRow(ctx, `INSERT INTO workspaces (name) VALUES ($1) RETURNING id`, n.WorkspaceName).Scan(&wsID); err != nil {
				return err
			}
		}
		o, err = insertOwner(ctx, tx, wsID, n, hash)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create owner: %w", err)
	}
	return o, nil
}

func insertOwner(ctx context.Context, tx pgx.Tx, wsID int64, n NewOwner, hash string) (*Owner, error) {
	o := &Owner{WorkspaceID: wsID, Email: n.Email, DisplayName: n.DisplayName}
	err := tx.QueryRow(ctx, `
		INSERT INTO owners (workspace_id, email, display_name, password_hash)
		VALUES ($1, $2, $3, $4)
		RETURNING id, created_at, (SELECT name FROM workspaces WHERE id = $1)`,
		wsID, n.Email, n.DisplayName, hash).Scan(&o.ID, &o.CreatedAt, &o.WorkspaceName)
	if isUniqueViolation(err, "owners_email_key") {
		return nil, &FieldError{"email", "an owner with this email already exists"}
	}
	return o, err
}

const ownerColumns = `o.id, o.workspace_id, w.name, o.email, o.display_name, o.created_at`

func scanOwner(row pgx.Row) (*Owner, error) {
	o := &Owner{}
	err := row.Scan(&o.ID, &o.WorkspaceID, &o.WorkspaceName, &o.Email, &o.DisplayName, &o.CreatedAt)
	return o, err
}

// Authenticate returns the owner whose email and password match, or
// ErrInvalidCredentials. Emails compare case-insensitively.
func (s *Store) Authenticate(ctx context.Context, email, password string) (*Owner, error) {
	var hash string
	o := &Owner{}
	err := s.pool.QueryRow(ctx, `
		SELECT `+ownerColumns+`, o.password_hash
		FROM owners o JOIN workspaces w ON w.id = o.workspace_id
		WHERE o.email = $1`, NormalizeEmail(email)).
		Scan(&o.ID, &o.WorkspaceID, &o.WorkspaceName, &o.Email, &o.DisplayName, &o.CreatedAt, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		_, _ = CheckPassword(dummyHash(), password)
		return nil, fmt.Errorf("store: authenticate: %w", ErrInvalidCredentials)
	}
	if err != nil {
		return nil, fmt.Errorf("store: authenticate: %w", err)
	}
	ok, err := CheckPassword(hash, password)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("store: authenticate: %w", ErrInvalidCredentials)
	}
	return o, nil
}

// OwnerByID returns an owner by id (the id comes from the signed session cookie).
func (s *Store) OwnerByID(ctx context.Context, id int64) (*Owner, error) {
	o, err := scanOwner(s.pool.QueryRow(ctx, `
		SELECT `+ownerColumns+`
		FROM owners o JOIN workspaces w ON w.id = o.workspace_id
		WHERE o.id = $1`, id))
	if err != nil {
		return nil, wrap("owner by id", err)
	}
	return o, nil
}

// RecordLoginFailure notes a failed sign-in for throttling.
func (s *Store) RecordLoginFailure(ctx context.Context, email, remoteAddr string) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO login_failures (email, remote_addr) VALUES ($1, $2)`, NormalizeEmail(email), remoteAddr)
	if err != nil {
		return fmt.Errorf("store: record login failure: %w", err)
	}
	return nil
}

// RecentLoginFailures counts failures for the email or the address within window.
func (s *Store) RecentLoginFailures(ctx context.Context, email, remoteAddr string, window time.Duration) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `
		SELECT count(*) FROM login_failures
		WHERE created_at > now() - make_interval(secs => $3) AND (email = $1 OR remote_addr = $2)`,
		NormalizeEmail(email), remoteAddr, window.Seconds()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: recent login failures: %w", err)
	}
	return n, nil
}

// ClearLoginFailures forgets the failures of an email after a successful sign-in.
func (s *Store) ClearLoginFailures(ctx context.Context, email string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM login_failures WHERE email = $1 OR created_at < now() - interval '1 day'`, NormalizeEmail(email))
	if err != nil {
		return fmt.Errorf("store: clear login failures: %w", err)
	}
	return nil
}

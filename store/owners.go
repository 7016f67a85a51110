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
	// Role is what the person may do in the workspace.
	Role      Role
	CreatedAt time.Time
}

// NewOwner is the input for creating an owner.
type NewOwner struct {
	Email       string
	DisplayName string
	Password    string
	// WorkspaceName names the workspace to join or create (CreateOwner only).
	WorkspaceName string
	// Role is the new person's role; empty is admin (the first owner, and
	// the operator's owner create unless told otherwise).
	Role Role
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

// Limits of a new owner: the display name and the workspace's name in
// characters, the password in bytes.
const (
	MaxOwnerNameLen     = 80
	MaxWorkspaceNameLen = 100
	MaxPasswordBytes    = 1024
)

// Validate checks the fields of a new owner and normalises them in place.
func (n *NewOwner) Validate() error {
	n.Email = NormalizeEmail(n.Email)
	n.DisplayName = strings.TrimSpace(n.DisplayName)
	n.WorkspaceName = strings.TrimSpace(n.WorkspaceName)
	errs := []error{validateOwnerEmail(n.Email), validateOwnerName(n.DisplayName)}
	if utf8.RuneCountInString(n.WorkspaceName) > MaxWorkspaceNameLen {
		errs = append(errs, &FieldError{"workspace", fmt.Sprintf("use at most %d characters", MaxWorkspaceNameLen)})
	}
	if err := validatePassword("password", n.Password); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func validateOwnerEmail(email string) error {
	if a, err := mail.ParseAddress(email); err != nil || a.Address != email || len(email) > 254 {
		return &FieldError{"email", "enter a valid email address, like name@example.com"}
	}
	return nil
}

func validateOwnerName(name string) error {
	if name == "" || utf8.RuneCountInString(name) > MaxOwnerNameLen {
		return &FieldError{"display_name", fmt.Sprintf("enter a name of 1 to %d characters", MaxOwnerNameLen)}
	}
	return CheckDisplayName("display_name", name)
}

func validatePassword(field, password string) error {
	if utf8.RuneCountInString(password) < MinPasswordLength {
		return &FieldError{field, fmt.Sprintf("use at least %d characters", MinPasswordLength)}
	}
	if len(password) > MaxPasswordBytes {
		return &FieldError{field, fmt.Sprintf("use at most %d bytes", MaxPasswordBytes)}
	}
	return nil
}

// FieldErrorsOf lists the field errors in err (one, or several joined),
// in order; nil when it holds none.
func FieldErrorsOf(err error) []*FieldError {
	switch e := err.(type) {
	case nil:
		return nil
	case *FieldError:
		return []*FieldError{e}
	case interface{ Unwrap() []error }:
		var out []*FieldError
		for _, inner := range e.Unwrap() {
			out = append(out, FieldErrorsOf(inner)...)
		}
		return out
	}
	return FieldErrorsOf(errors.Unwrap(err))
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

// CreateFirstOwner creates the first workspace and its owner, for the one-time setup code a
// starting server offered (AddSetupCode). It fails with ErrConflict once any owner exists, also
// when two requests race.
func (s *Store) CreateFirstOwner(ctx context.Context, n NewOwner, setupCode string) (*Owner, error) {
	var o *Owner
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, firstOwnerLock); err != nil {
			return err
		}
		var exists, codeOK bool
		err := tx.QueryRow(ctx, `
			SELECT EXISTS (SELECT 1 FROM owners), EXISTS (SELECT 1 FROM setup_codes WHERE code_hash = $1)`,
			setupCodeHash(setupCode)).Scan(&exists, &codeOK)
		if err != nil {
			return err
		}
		if exists {
			return ErrConflict
		}
		var errs []error
		switch {
		case strings.TrimSpace(setupCode) == "":
			errs = append(errs, &FieldError{"setup_code", "enter the setup code: the server prints it at start and keeps it in the setup-code file of its data folder"})
		case !codeOK:
			errs = append(errs, &FieldError{"setup_code", "that is not the setup code: the server prints it at start and keeps it in the setup-code file of its data folder"})
		}
		if err := n.Validate(); err != nil {
			errs = append(errs, err)
		}
		if len(errs) > 0 {
			return errors.Join(errs...)
		}
		if n.WorkspaceName == "" {
			n.WorkspaceName = "My workspace"
		}
		hash, err := s.hashPassword(ctx, n.Password)
		if err != nil {
			return err
		}
		var wsID int64
		if err := tx.QueryRow(ctx, `INSERT INTO workspaces (name) VALUES ($1) RETURNING id`, n.WorkspaceName).Scan(&wsID); err != nil {
			return err
		}
		if o, err = insertOwner(ctx, tx, wsID, n, hash); err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `DELETE FROM setup_codes`)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create first owner: %w", err)
	}
	return o, nil
}

// CreateOwner adds an owner to the workspace named n.WorkspaceName, creating that workspace when it
// does not exist.
func (s *Store) CreateOwner(ctx context.Context, n NewOwner) (*Owner, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	hash, err := s.hashPassword(ctx, n.Password)
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
		if o, err = insertOwner(ctx, tx, wsID, n, hash); err != nil {
			return err
		}
		// The first owner made by the operator ends the setup codes as well.
		_, err = tx.Exec(ctx, `DELETE FROM setup_codes`)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create owner: %w", err)
	}
	return o, nil
}

func insertOwner(ctx context.Context, tx pgx.Tx, wsID int64, n NewOwner, hash string) (*Owner, error) {
	if n.Role == "" {
		n.Role = RoleAdmin
	}
	o := &Owner{WorkspaceID: wsID, Email: n.Email, DisplayName: n.DisplayName, Role: n.Role}
	err := tx.QueryRow(ctx, `
		INSERT INTO owners (workspace_id, email, display_name, password_hash, role)
		VALUES ($1, $2, $3, $4, $5)
		RETURNING id, created_at, (SELECT name FROM workspaces WHERE id = $1)`,
		wsID, n.Email, n.DisplayName, hash, string(n.Role)).Scan(&o.ID, &o.CreatedAt, &o.WorkspaceName)
	if isUniqueViolation(err, "owners_email_key") {
		return nil, &FieldError{"email", "an owner with this email already exists"}
	}
	return o, err
}

const ownerColumns = `o.id, o.workspace_id, w.name, o.email, o.display_name, o.role, o.created_at`

func scanOwner(row pgx.Row, extra ...any) (*Owner, error) {
	o := &Owner{}
	err := row.Scan(append([]any{&o.ID, &o.WorkspaceID, &o.WorkspaceName, &o.Email, &o.DisplayName, &o.Role, &o.CreatedAt}, extra...)...)
	return o, err
}

// Authenticate returns the owner whose email and password match, or ErrInvalidCredentials; ErrBusy
// when the hash gate is full. An unknown email costs a hash as well, so timing does not tell which
// emails exist.
func (s *Store) Authenticate(ctx context.Context, email, password string) (*Owner, error) {
	var hash string
	o, err := scanOwner(s.pool.QueryRow(ctx, `
		SELECT `+ownerColumns+`, o.password_hash
		FROM owners o JOIN workspaces w ON w.id = o.workspace_id
		WHERE o.email = $1 AND o.removed_at IS NULL`, NormalizeEmail(email)), &hash)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: authenticate: %w", err)
	}
	ok, err := s.checkPassword(ctx, hash, password)
	if err != nil {
		return nil, fmt.Errorf("store: authenticate: %w", err)
	}
	if !ok {
		return nil, fmt.Errorf("store: authenticate: %w", ErrInvalidCredentials)
	}
	return o, nil
}

// ChangePassword sets an owner's new password after checking the current
// one, and ends every other sign-in of theirs (keep is the one making the
// change). A wrong current password and a refused new one come back
// together (FieldErrorsOf); ErrBusy when the hash gate is full.
func (s *Store) ChangePassword(ctx context.Context, ownerID int64, current, next string, keep int64) error {
	var hash string
	if err := s.pool.QueryRow(ctx, `SELECT password_hash FROM owners WHERE id = $1 AND removed_at IS NULL`, ownerID).Scan(&hash); err != nil {
		return wrap("change password", err)
	}
	var errs []error
	ok, err := s.checkPassword(ctx, hash, current)
	if err != nil {
		return fmt.Errorf("store: change password: %w", err)
	}
	if !ok {
		errs = append(errs, &FieldError{"current_password", "that is not your current password"})
	}
	if err := validatePassword("new_password", next); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	_, err = s.setPassword(ctx, `id = $1`, ownerID, next, keep)
	return err
}

// SetPassword is the operator's reset of an owner's password (osfoundry owner set-password): it
// needs no current password and ends every sign-in of the owner.
func (s *Store) SetPassword(ctx context.Context, email, password string) (int, error) {
	if err := validatePassword("password", password); err != nil {
		return 0, err
	}
	return s.setPassword(ctx, `email = $1`, NormalizeEmail(email), password, 0)
}

func (s *Store) setPassword(ctx context.Context, where string, arg any, password string, keep int64) (int, error) {
	hash, err := s.hashPassword(ctx, password)
	if err != nil {
		return 0, err
	}
	var ended []int64
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var id int64
		if err := tx.QueryRow(ctx, `UPDATE owners SET password_hash = $2 WHERE `+where+` AND removed_at IS NULL RETURNING id`, arg, hash).Scan(&id); err != nil {
			return err
		}
		ended, err = endSignIns(ctx, tx, `owner_id = $1 AND id <> $2`, id, keep)
		return err
	})
	if err != nil {
		return 0, wrap("set password", err)
	}
	s.notifySignOuts(ended)
	return len(ended), nil
}

// OwnerByID returns an owner by id (the owner of a sign-in); ErrNotFound
// once removed.
func (s *Store) OwnerByID(ctx context.Context, id int64) (*Owner, error) {
	o, err := scanOwner(s.pool.QueryRow(ctx, `
		SELECT `+ownerColumns+`
		FROM owners o JOIN workspaces w ON w.id = o.workspace_id
		WHERE o.id = $1 AND o.removed_at IS NULL`, id))
	if err != nil {
		return nil, wrap("owner by id", err)
	}
	return o, nil
}

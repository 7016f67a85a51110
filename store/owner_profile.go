package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// OwnerProfile is what an owner changes about themselves on Account.
type OwnerProfile struct {
	DisplayName string
	Email       string
	// Password confirms a change of email; a name alone needs none.
	Password string
}

// ErrEmailTaken refuses an email another owner signs in with.
var ErrEmailTaken = &FieldError{"email", "another owner signs in with that email"}

// UpdateOwnerProfile sets an owner's name and email; a new email only with the owner's current
// password, and only while no other owner has it.
func (s *Store) UpdateOwnerProfile(ctx context.Context, ownerID int64, p OwnerProfile) (*Owner, error) {
	p.DisplayName = strings.TrimSpace(p.DisplayName)
	p.Email = NormalizeEmail(p.Email)
	var current, hash string
	if err := s.pool.QueryRow(ctx, `SELECT email, password_hash FROM owners WHERE id = $1`, ownerID).Scan(&current, &hash); err != nil {
		return nil, wrap("update owner", err)
	}
	errs := []error{validateOwnerName(p.DisplayName), validateOwnerEmail(p.Email)}
	if p.Email != current && errors.Join(errs...) == nil {
		ok, err := s.checkPassword(ctx, hash, p.Password)
		if err != nil {
			return nil, fmt.Errorf("store: update owner: %w", err)
		}
		if !ok {
			errs = append(errs, &FieldError{"password", "that is not your password: a new email needs it"})
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	_, err := s.pool.Exec(ctx, `UPDATE owners SET display_name = $2, email = $3 WHERE id = $1`, ownerID, p.DisplayName, p.Email)
	if isUniqueViolation(err, "owners_email_key") {
		return nil, ErrEmailTaken
	}
	if err != nil {
		return nil, fmt.Errorf("store: update owner: %w", err)
	}
	return s.OwnerByID(ctx, ownerID)
}

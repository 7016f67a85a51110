package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AuthCode is an authorization code as stored: only its hash is kept.
type AuthCode struct {
	CodeHash      []byte
	ConnectionID  int64
	WorkspaceID   int64
	ClientID      string
	RedirectURI   string
	CodeChallenge string
	Resource      string
	Scopes        []string
	ExpiresAt     time.Time
}

// CreateAuthCode stores a new authorization code (by hash) for an approved grant.
func (s *Store) CreateAuthCode(ctx context.Context, a *AuthCode) error {
	_, err := s.pool.Exec(ctx, `
		INSERT INTO oauth_codes (code_hash, connection_id, client_id, redirect_uri, code_challenge, resource, scopes, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		a.CodeHash, a.ConnectionID, a.ClientID, a.RedirectURI, a.CodeChallenge, a.Resource, a.Scopes, a.ExpiresAt)
	if err != nil {
		return fmt.Errorf("store: create auth code: %w", err)
	}
	return nil
}

// RedeemAuthCode marks a code used and returns it; the caller checks expiry, client, PKCE, redirect
// URI and resource. A second redemption revokes the connection it granted and gives ErrReplay; an
// unknown code ErrNotFound.
func (s *Store) RedeemAuthCode(ctx context.Context, code string, now time.Time) (*AuthCode, error) {
	a := &AuthCode{CodeHash: HashToken(code)}
	err := s.pool.QueryRow(ctx, `
		UPDATE oauth_codes o SET used_at = $2
		FROM connections c
		WHERE o.code_hash = $1 AND o.used_at IS NULL AND c.id = o.connection_id AND c.revoked_at IS NULL
		RETURNING o.connection_id, c.workspace_id, o.client_id, o.redirect_uri, o.code_challenge, o.resource, o.scopes, o.expires_at`,
		a.CodeHash, now).Scan(&a.ConnectionID, &a.WorkspaceID, &a.ClientID, &a.RedirectURI, &a.CodeChallenge, &a.Resource, &a.Scopes, &a.ExpiresAt)
	if err == nil {
		return a, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: redeem auth code: %w", err)
	}
	var connID, wsID int64
	err = s.pool.QueryRow(ctx, `
		SELECT c.id, c.workspace_id FROM oauth_codes o JOIN connections c ON c.id = o.connection_id
		WHERE o.code_hash = $1 AND o.used_at IS NOT NULL`, a.CodeHash).Scan(&connID, &wsID)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: redeem auth code: %w", ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: redeem auth code: %w", err)
	}
	if err := s.RevokeConnection(ctx, wsID, connID); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("store: redeem auth code: %w", ErrReplay)
}

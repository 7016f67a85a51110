package store

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrReplay means a spent authorization code or an exchanged refresh token (past its grace window)
// was presented again.
var ErrReplay = errors.New("grant replayed")

// TokenPair is what the token endpoint hands out.
type TokenPair struct {
	ConnectionID int64
	// ClientID is the client the pair is issued to; only it may refresh.
	ClientID        string
	AccessToken     string
	RefreshToken    string
	AccessExpiresAt time.Time
	Scopes          []string
	Resource        string
	superseded      bool
}

// TokenLifetimes are the lives of newly issued tokens.
type TokenLifetimes struct {
	Access  time.Duration
	Refresh time.Duration
}

// insertTokenPair stores the hashes of a token pair for a live connection; it is idempotent, so
// re-deriving a pair in the grace window changes nothing.
func insertTokenPair(ctx context.Context, tx pgx.Tx, p *TokenPair, now time.Time, life TokenLifetimes) error {
	_, err := tx.Exec(ctx, `
		INSERT INTO access_tokens (token_hash, connection_id, resource, scopes, expires_at)
		SELECT $1, c.id, $3, ARRAY(SELECT unnest($4::text[]) INTERSECT SELECT unnest(c.scopes) ORDER BY 1), $5
		FROM connections c WHERE c.id = $2 AND c.revoked_at IS NULL
		ON CONFLICT (token_hash) DO NOTHING`,
		HashToken(p.AccessToken), p.ConnectionID, p.Resource, p.Scopes, now.Add(life.Access))
	if err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `
		INSERT INTO refresh_tokens (token_hash, connection_id, client_id, resource, scopes, expires_at, superseded)
		SELECT $1, c.id, $6, $3, $4, $5, $7 FROM connections c WHERE c.id = $2 AND c.revoked_at IS NULL
		ON CONFLICT (token_hash) DO NOTHING`,
		HashToken(p.RefreshToken), p.ConnectionID, p.Resource, p.Scopes, now.Add(life.Refresh), p.ClientID, p.superseded); err != nil {
		return err
	}
	// Expired rows of this grant go while we are here (bounded by the connection's own rows).
	for _, q := range []string{
		`DELETE FROM access_tokens WHERE connection_id = $1 AND expires_at < $2`,
		`DELETE FROM refresh_tokens WHERE connection_id = $1 AND expires_at < $2::timestamptz - interval '1 day'`,
		`DELETE FROM oauth_codes WHERE connection_id = $1 AND expires_at < $2::timestamptz - interval '1 day'`,
	} {
		if _, err := tx.Exec(ctx, q, p.ConnectionID, now); err != nil {
			return err
		}
	}
	return tx.QueryRow(ctx, `SELECT expires_at, scopes FROM access_tokens WHERE token_hash = $1`, HashToken(p.AccessToken)).
		Scan(&p.AccessExpiresAt, &p.Scopes)
}

// IssueTokens stores a new access and refresh token pair for a connection (after an authorization
// code was redeemed). A revoked connection gives ErrNotFound.
func (s *Store) IssueTokens(ctx context.Context, p *TokenPair, now time.Time, life TokenLifetimes) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error { return insertTokenPair(ctx, tx, p, now, life) })
	if err != nil {
		return wrap("issue tokens", err)
	}
	return nil
}

// RefreshRequest is a refresh_token grant.
type RefreshRequest struct {
	Token    string
	ClientID string
	Next     func(token string) (access, refresh string)
	Now      time.Time
	Grace    time.Duration
	Life     TokenLifetimes
}

// RotateRefreshToken exchanges a refresh token for its successor pair, the same pair again within
// Grace; a later exchange revokes the connection and gives ErrReplay. Unknown, expired,
// other-client and revoked tokens give ErrNotFound.
func (s *Store) RotateRefreshToken(ctx context.Context, r RefreshRequest) (*TokenPair, error) {
	var p *TokenPair
	var replayConn, replayWS int64
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var (
			connID, wsID int64
			clientID     *string
			resource     string
			scopes       []string
			expires      time.Time
			rotatedAt    *time.Time
			replacedBy   []byte
			superseded   bool
		)
		err := tx.QueryRow(ctx, `
			SELECT rt.connection_id, c.workspace_id, COALESCE(rt.client_id, c.client_id), rt.resource, rt.scopes, rt.expires_at, rt.rotated_at, rt.replaced_by_hash, rt.superseded
			FROM refresh_tokens rt JOIN connections c ON c.id = rt.connection_id
			WHERE rt.token_hash = $1 AND c.revoked_at IS NULL
			FOR UPDATE OF rt`, HashToken(r.Token)).
			Scan(&connID, &wsID, &clientID, &resource, &scopes, &expires, &rotatedAt, &replacedBy, &superseded)
		if err != nil {
			return err
		}
		if clientID == nil || *clientID != r.ClientID || !r.Now.Before(expires) {
			return ErrNotFound
		}
		access, refresh := r.Next(r.Token)
		switch {
		case rotatedAt == nil:
			if _, err := tx.Exec(ctx, `UPDATE refresh_tokens SET rotated_at = $2, replaced_by_hash = $3 WHERE token_hash = $1`,
				HashToken(r.Token), r.Now, HashToken(refresh)); err != nil {
				return err
			}
		case r.Now.Before(rotatedAt.Add(r.Grace)) && subtle.ConstantTimeCompare(replacedBy, HashToken(refresh)) == 1:
			// In the grace window: the same successor pair again.
		default:
			replayConn, replayWS = connID, wsID
			return ErrReplay
		}
		p = &TokenPair{ConnectionID: connID, ClientID: r.ClientID, AccessToken: access, RefreshToken: refresh, Resource: resource, Scopes: scopes,
			superseded: superseded}
		return insertTokenPair(ctx, tx, p, r.Now, r.Life)
	})
	if errors.Is(err, ErrReplay) {
		if err := s.RevokeConnection(ctx, replayWS, replayConn); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("store: rotate refresh token: %w", ErrReplay)
	}
	if err != nil {
		return nil, wrap("rotate refresh token", err)
	}
	return p, nil
}

// RevokeClientToken implements RFC 7009 for clientID.
func (s *Store) RevokeClientToken(ctx context.Context, clientID, token string) error {
	h := HashToken(token)
	var wsID, connID int64
	var superseded bool
	err := s.pool.QueryRow(ctx, `
		SELECT c.workspace_id, c.id, rt.superseded
		FROM refresh_tokens rt JOIN connections c ON c.id = rt.connection_id
		WHERE rt.token_hash = $1 AND COALESCE(rt.client_id, c.client_id) = $2`, h, clientID).Scan(&wsID, &connID, &superseded)
	switch {
	case err == nil && !superseded:
		return s.RevokeConnection(ctx, wsID, connID)
	case err == nil:
		if _, err := s.pool.Exec(ctx, `
			DELETE FROM refresh_tokens rt USING connections c
			WHERE rt.connection_id = $1 AND c.id = rt.connection_id AND rt.superseded AND COALESCE(rt.client_id, c.client_id) = $2`,
			connID, clientID); err != nil {
			return fmt.Errorf("store: revoke token: %w", err)
		}
		return nil
	case !errors.Is(err, pgx.ErrNoRows):
		return fmt.Errorf("store: revoke token: %w", err)
	}
	_, err = s.pool.Exec(ctx, `
		DELETE FROM access_tokens t USING connections c
		WHERE t.token_hash = $1 AND c.id = t.connection_id AND c.client_id = $2`, h, clientID)
	if err != nil {
		return fmt.Errorf("store: revoke token: %w", err)
	}
	return nil
}

// RefreshDerivationSecret names the server secret that derives successor token pairs.
const RefreshDerivationSecret = "oauth_refresh_derivation"

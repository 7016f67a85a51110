package store

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

// ErrReplay means a spent authorization code or an exchanged refresh token
// (past its grace window) was presented again. The grant has been revoked.
var ErrReplay = errors.New("grant replayed")

// Token endpoint auth methods a client may register.
const (
	AuthMethodNone  = "none"
	AuthMethodBasic = "client_secret_basic"
	AuthMethodPost  = "client_secret_post"
)

// OAuthClient is a registered OAuth client, or a fetched client ID metadata
// document (then ClientID is the document's https URL).
type OAuthClient struct {
	ClientID string
	// SecretHash is the SHA-256 of the client secret; nil for public clients.
	SecretHash              []byte
	ClientName              string
	RedirectURIs            []string
	TokenEndpointAuthMethod string
	IsMetadataDocument      bool
	// Metadata is the registration request or metadata document as received.
	Metadata  json.RawMessage
	CreatedAt time.Time
	FetchedAt *time.Time
}

// IsPublic reports whether the client authenticates with no secret.
func (c *OAuthClient) IsPublic() bool { return c.TokenEndpointAuthMethod == AuthMethodNone }

// CheckSecret reports, in constant time, whether secret is the client's.
func (c *OAuthClient) CheckSecret(secret string) bool {
	if c.SecretHash == nil || secret == "" {
		return false
	}
	return subtle.ConstantTimeCompare(HashToken(secret), c.SecretHash) == 1
}

const clientColumns = `client_id, client_secret_hash, client_name, redirect_uris, token_endpoint_auth_method, is_metadata_document, metadata, created_at, fetched_at`

func scanClient(row pgx.Row) (*OAuthClient, error) {
	c := &OAuthClient{}
	err := row.Scan(&c.ClientID, &c.SecretHash, &c.ClientName, &c.RedirectURIs, &c.TokenEndpointAuthMethod,
		&c.IsMetadataDocument, &c.Metadata, &c.CreatedAt, &c.FetchedAt)
	return c, err
}

// CreateOAuthClient stores a dynamically registered client. registeredFrom is
// the caller's address, counted by RecentClientRegistrations.
func (s *Store) CreateOAuthClient(ctx context.Context, c *OAuthClient, registeredFrom string) error {
	if c.Metadata == nil {
		c.Metadata = json.RawMessage(`{}`)
	}
	err := s.pool.QueryRow(ctx, `
		INSERT INTO oauth_clients (client_id, client_secret_hash, client_name, redirect_uris, token_endpoint_auth_method, metadata, registered_from)
		VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING created_at`,
		c.ClientID, c.SecretHash, c.ClientName, c.RedirectURIs, c.TokenEndpointAuthMethod, c.Metadata, registeredFrom).Scan(&c.CreatedAt)
	if err != nil {
		return fmt.Errorf("store: create oauth client: %w", err)
	}
	return nil
}

// SaveMetadataDocumentClient records (or refreshes) a client known by its
// client ID metadata document.
func (s *Store) SaveMetadataDocumentClient(ctx context.Context, c *OAuthClient, fetchedAt time.Time) error {
	if c.Metadata == nil {
		c.Metadata = json.RawMessage(`{}`)
	}
	err := s.pool.QueryRow(ctx, `
		INSERT INTO oauth_clients (client_id, client_name, redirect_uris, token_endpoint_auth_method, is_metadata_document, metadata, fetched_at)
		VALUES ($1, $2, $3, 'none', true, $4, $5)
		ON CONFLICT (client_id) DO UPDATE SET client_name = EXCLUDED.client_name, redirect_uris = EXCLUDED.redirect_uris,
			metadata = EXCLUDED.metadata, fetched_at = EXCLUDED.fetched_at
		WHERE oauth_clients.is_metadata_document
		RETURNING created_at`,
		c.ClientID, c.ClientName, c.RedirectURIs, c.Metadata, fetchedAt).Scan(&c.CreatedAt)
	if err != nil {
		return wrap("save metadata document client", err)
	}
	c.IsMetadataDocument = true
	c.TokenEndpointAuthMethod = AuthMethodNone
	c.SecretHash = nil
	c.FetchedAt = &fetchedAt
	return nil
}

// PruneUngrantedClients deletes, at most 500 at a time, the clients stored
// before then that no connection, authorization code or refresh token names:
// registrations and documents no owner ever approved. It returns how many
// went.
func (s *Store) PruneUngrantedClients(ctx context.Context, before time.Time) (int64, error) {
	tag, err := s.pool.Exec(ctx, `
		DELETE FROM oauth_clients WHERE client_id IN (
			SELECT c.client_id FROM oauth_clients c
			WHERE c.created_at < $1
				AND NOT EXISTS (SELECT 1 FROM connections n WHERE n.client_id = c.client_id)
				AND NOT EXISTS (SELECT 1 FROM oauth_codes o WHERE o.client_id = c.client_id)
				AND NOT EXISTS (SELECT 1 FROM refresh_tokens r WHERE r.client_id = c.client_id)
			ORDER BY c.created_at
			LIMIT 500)`, before)
	if err != nil {
		return 0, fmt.Errorf("store: prune ungranted clients: %w", err)
	}
	return tag.RowsAffected(), nil
}

// GetOAuthClient returns a client by id, or ErrNotFound.
func (s *Store) GetOAuthClient(ctx context.Context, clientID string) (*OAuthClient, error) {
	c, err := scanClient(s.pool.QueryRow(ctx, `SELECT `+clientColumns+` FROM oauth_clients WHERE client_id = $1`, clientID))
	if err != nil {
		return nil, wrap("get oauth client", err)
	}
	return c, nil
}

// RecentClientRegistrations counts the clients registered from addr since then.
func (s *Store) RecentClientRegistrations(ctx context.Context, addr string, since time.Time) (int, error) {
	var n int
	err := s.pool.QueryRow(ctx, `
		SELECT count(*) FROM oauth_clients WHERE registered_from = $1 AND created_at > $2`, addr, since).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count client registrations: %w", err)
	}
	return n, nil
}

// sameSoftwareSQL is the rule for which connections an authorization by
// the client cur (a row of oauth_clients) may continue, as a condition on
// the connection c: one of an OAuth client with the same client_id (the
// same registration, or the same client ID metadata document), or with the
// same client name. The owner picks one on the consent page; nothing is
// continued by itself.
func sameSoftwareSQL(c, cur string) string {
	return c + `.client_id IS NOT NULL AND (` + c + `.client_id = ` + cur + `.client_id OR (btrim(` + cur + `.client_name) <> ''
		AND ` + c + `.client_name = left(btrim(` + cur + `.client_name), 200)))`
}

// ContinuableConnection is a connection of the owner that an authorization
// of a client may continue: the consent page offers "Sign in again as" it.
type ContinuableConnection struct {
	ID int64
	// Handle and DisplayName are the claimed profile, empty before a claim.
	Handle      string
	DisplayName string
	ClientName  string
	LastSeenAt  *time.Time
	RevokedAt   *time.Time
	// Held is true when the client's own dynamic registration holds the
	// connection: the one sign-in that continues it by default.
	Held bool
	// Projects are the names of the projects it is seated in.
	Projects []string
}

// maxContinuable bounds the connections the consent page lists.
const maxContinuable = 20

// ListContinuableConnections returns the owner's connections (revoked ones
// too) an authorization by clientID may continue (sameSoftwareSQL): those
// the client's own registration holds first, then live before revoked, the
// most recently used first.
func (s *Store) ListContinuableConnections(ctx context.Context, workspaceID, ownerID int64, clientID string) ([]ContinuableConnection, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, coalesce(p.handle, ''), coalesce(p.display_name, ''), c.client_name, c.last_seen_at, c.revoked_at,
			c.client_id = cur.client_id AND NOT cur.is_metadata_document AS held,
			ARRAY(SELECT pr.name FROM project_seats ps JOIN projects pr ON pr.id = ps.project_id
				WHERE ps.connection_id = c.id ORDER BY lower(pr.name), pr.id)
		FROM oauth_clients cur
		JOIN connections c ON c.workspace_id = $1 AND c.owner_id = $2 AND `+sameSoftwareSQL("c", "cur")+`
		LEFT JOIN agent_profiles p ON p.connection_id = c.id
		WHERE cur.client_id = $3
		ORDER BY held DESC, c.revoked_at IS NOT NULL, c.last_seen_at DESC NULLS LAST, c.id DESC
		LIMIT `+strconv.Itoa(maxContinuable), workspaceID, ownerID, clientID)
	if err != nil {
		return nil, fmt.Errorf("store: list continuable connections: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowToStructByPos[ContinuableConnection])
	if err != nil {
		return nil, fmt.Errorf("store: list continuable connections: %w", err)
	}
	return out, nil
}

// ErrNotContinuable refuses a grant that names a connection the client may
// not continue: not the owner's, not of this workspace, or of another client
// software.
var ErrNotContinuable = &FieldError{"agent", "that agent cannot sign in again with this client; choose one listed, or connect as a new agent"}

// GrantConnection is what an owner's approval of an OAuth client produces,
// in one transaction: a new connection, or, with n.Continue, the owner's
// connection of the same client software (sameSoftwareSQL, checked in the
// statement) continued with the newly approved scopes and client: its
// profile, sender slug, seats and invitations stay, a revoked one lives
// again (its tokens went at revocation; the code about to be issued brings
// new ones), the tokens it holds are marked superseded (a later revocation
// of one of them ends only that sign-in's tokens), and scopes the owner no
// longer grants are taken off them. Either way it is seated in n.ProjectIDs
// and invited as a contributor to the sessions of n.InviteSessionIDs that
// belong to those projects (an existing invitation keeps its role).
func (s *Store) GrantConnection(ctx context.Context, n NewConnection) (*Connection, error) {
	if n.ClientID == nil {
		return nil, fmt.Errorf("store: grant connection: %w", &FieldError{"client_id", "an OAuth grant needs a client"})
	}
	scopes, err := ValidateScopes(n.Scopes)
	if err != nil {
		return nil, err
	}
	c := &Connection{}
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		name, _, err := checkRole(ctx, tx, n.WorkspaceID, n.OwnerID, RoleAdmin)
		if err != nil {
			return err
		}
		if n.Continue == 0 {
			if c, err = insertConnection(ctx, tx, n, scopes); err != nil {
				return err
			}
		} else if err := continueConnection(ctx, tx, n, scopes, c); err != nil {
			return err
		}
		if err := seatConnection(ctx, tx, n.WorkspaceID, c.ID, n.ProjectIDs); err != nil {
			return err
		}
		if len(n.InviteSessionIDs) > 0 && len(n.ProjectIDs) > 0 {
			rows, err := tx.Query(ctx, `
				SELECT id FROM sessions WHERE workspace_id = $1 AND id = ANY($2::bigint[]) AND project_id = ANY($3::bigint[])
				ORDER BY id`, n.WorkspaceID, n.InviteSessionIDs, n.ProjectIDs)
			if err != nil {
				return err
			}
			sessions, err := pgx.CollectRows(rows, pgx.RowTo[int64])
			if err != nil {
				return err
			}
			for _, sid := range sessions {
				if err := invite(ctx, tx, n.WorkspaceID, sid, c.ID, RoleContributor, true); err != nil && !errors.Is(err, pgx.ErrNoRows) {
					return err
				}
			}
		}
		// Sidebars show the agent (back) in its projects: a rare write,
		// notified in the transaction (notify.go).
		if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2::bigint::text)`, PresenceChannel, n.WorkspaceID); err != nil {
			return err
		}
		by := Actor{OwnerID: n.OwnerID, WorkspaceID: n.WorkspaceID, RemoteAddr: n.RemoteAddr, UserAgent: n.UserAgent}
		return insertAudit(ctx, tx, by, name, AuditEntry{Kind: AuditConnGranted, Subject: c.ClientName,
			Detail: map[string]any{"connection_id": c.ID, "scopes": c.Scopes, "continued": n.Continue != 0}})
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("store: grant connection: %w", ErrNotContinuable)
	}
	var re *RoleError
	if errors.As(err, &re) {
		return nil, err
	}
	if err != nil {
		return nil, fmt.Errorf("store: grant connection: %w", err)
	}
	return c, nil
}

// continueConnection moves the connection n.Continue to n's client and
// scopes, if sameSoftwareSQL lets that client continue it (pgx.ErrNoRows
// otherwise), and fills c.
func continueConnection(ctx context.Context, tx pgx.Tx, n NewConnection, scopes []string, c *Connection) error {
	err := tx.QueryRow(ctx, `
		UPDATE connections c SET scopes = $5, client_id = cur.client_id, revoked_at = NULL
		FROM oauth_clients cur
		WHERE c.workspace_id = $1 AND c.owner_id = $2 AND c.id = $4 AND cur.client_id = $3 AND `+sameSoftwareSQL("c", "cur")+`
		RETURNING c.id, c.workspace_id, c.owner_id, c.client_id, c.client_name, c.scopes, c.sender_slug, c.created_at, c.last_seen_at, c.revoked_at`,
		n.WorkspaceID, n.OwnerID, *n.ClientID, n.Continue, scopes).
		Scan(&c.ID, &c.WorkspaceID, &c.OwnerID, &c.ClientID, &c.ClientName, &c.Scopes, &c.SenderSlug, &c.CreatedAt, &c.LastSeenAt, &c.RevokedAt)
	if err != nil {
		return err
	}
	// The earlier sign-ins' tokens are superseded, and keep no scope the
	// owner has now withheld.
	if _, err := tx.Exec(ctx, `UPDATE refresh_tokens SET superseded = true WHERE connection_id = $1 AND NOT superseded`, c.ID); err != nil {
		return err
	}
	for _, q := range []string{
		`DELETE FROM access_tokens WHERE connection_id = $1 AND NOT scopes && $2::text[]`,
		`DELETE FROM refresh_tokens WHERE connection_id = $1 AND NOT scopes && $2::text[]`,
		`UPDATE access_tokens SET scopes = ARRAY(SELECT unnest(scopes) INTERSECT SELECT unnest($2::text[]) ORDER BY 1)
		 WHERE connection_id = $1 AND NOT scopes <@ $2::text[]`,
		`UPDATE refresh_tokens SET scopes = ARRAY(SELECT unnest(scopes) INTERSECT SELECT unnest($2::text[]) ORDER BY 1)
		 WHERE connection_id = $1 AND NOT scopes <@ $2::text[]`,
	} {
		if _, err := tx.Exec(ctx, q, c.ID, scopes); err != nil {
			return err
		}
	}
	return nil
}

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

// RedeemAuthCode marks a code used and returns it; the caller then checks
// expiry, client, PKCE, redirect URI and resource. A code can be redeemed once:
// a second attempt revokes the connection it granted and returns ErrReplay.
// An unknown code gives ErrNotFound.
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
	// superseded carries a rotated refresh token's mark to its successor.
	superseded bool
}

// TokenLifetimes are the lives of newly issued tokens.
type TokenLifetimes struct {
	Access  time.Duration
	Refresh time.Duration
}

// insertTokenPair stores the hashes of an access and a refresh token for a
// live connection. It is idempotent, so re-deriving an already issued pair in
// the grace window changes nothing. It returns the access token's expiry and
// the scopes it carries.
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
	// Expired rows of this grant go while we are here (bounded by the
	// connection's own rows). Spent codes and refresh tokens are kept for a day
	// past expiry so that a replay is still recognised and revokes the grant.
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

// IssueTokens stores a new access and refresh token pair for a connection
// (after an authorization code was redeemed). Scopes are narrowed to the
// connection's. A revoked connection gives ErrNotFound.
func (s *Store) IssueTokens(ctx context.Context, p *TokenPair, now time.Time, life TokenLifetimes) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error { return insertTokenPair(ctx, tx, p, now, life) })
	if err != nil {
		return wrap("issue tokens", err)
	}
	return nil
}

// RefreshRequest is a refresh_token grant. Next is the successor pair, which
// the caller derives deterministically from Token, so that every exchange of
// Token within the grace window returns the same pair.
type RefreshRequest struct {
	Token    string
	ClientID string
	Next     func(token string) (access, refresh string)
	Now      time.Time
	Grace    time.Duration
	Life     TokenLifetimes
}

// RotateRefreshToken exchanges a refresh token for its successor pair. The
// first exchange records the rotation; later ones within Grace return the same
// pair; any later one revokes the connection and returns ErrReplay. Unknown,
// expired, other-client and revoked tokens give ErrNotFound.
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

// RevokeClientToken implements RFC 7009 for clientID: an access token of one
// of its connections is deleted; a refresh token ends the whole grant (the
// connection is revoked), unless a later sign-in has since continued the
// connection (the token is superseded): then only the superseded refresh
// tokens of clientID go, and the newer sign-in keeps its own. Unknown tokens
// and other clients' tokens are ignored, as the RFC asks.
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

// ServerSecret returns the named shared secret, creating it (32 random bytes)
// on first use. Every replica reads the same value.
func (s *Store) ServerSecret(ctx context.Context, name string) ([]byte, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return nil, err
	}
	if _, err := s.pool.Exec(ctx, `INSERT INTO server_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING`, name, b); err != nil {
		return nil, fmt.Errorf("store: server secret: %w", err)
	}
	var v []byte
	if err := s.pool.QueryRow(ctx, `SELECT value FROM server_secrets WHERE name = $1`, name).Scan(&v); err != nil {
		return nil, wrap("server secret", err)
	}
	return v, nil
}

// RefreshDerivationSecret names the server secret that derives successor token pairs.
const RefreshDerivationSecret = "oauth_refresh_derivation"

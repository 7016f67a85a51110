package store

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

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

// CreateOAuthClient stores a dynamically registered client.
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

// PruneUngrantedClients deletes, at most 500 at a time, the clients stored before then that no
// connection, authorization code or refresh token names.
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

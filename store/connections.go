package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// The two OAuth scopes.
const (
	ScopeRead  = "osfoundry:read"
	ScopeWrite = "osfoundry:write"
)

// AllScopes lists every scope, in the order metadata documents show them.
var AllScopes = []string{ScopeRead, ScopeWrite}

// AccessTokenTTL is how long an access token is valid.
const AccessTokenTTL = time.Hour

// Connection is one grant: an MCP client authorized by an owner.
type Connection struct {
	ID          int64
	WorkspaceID int64
	OwnerID     int64
	ClientID    *string
	ClientName  string
	Scopes      []string
	SenderSlug  *string
	CreatedAt   time.Time
	LastSeenAt  *time.Time
	RevokedAt   *time.Time
}

// NewConnection is the input of CreateConnection.
type NewConnection struct {
	WorkspaceID int64
	OwnerID     int64
	// ClientID is the OAuth client, or nil for a token minted without OAuth.
	ClientID   *string
	ClientName string
	Scopes     []string
	// ProjectIDs are the projects the connection's agent is seated in.
	ProjectIDs []int64
	// Continue is the connection an OAuth grant continues (the owner chose "Sign in again as" on
	// the consent page).
	Continue int64
	// InviteSessionIDs are sessions an OAuth grant invites the connection to, as a contributor.
	InviteSessionIDs []int64
	// RemoteAddr and UserAgent are the browser's that granted it, for the
	// audit log (GrantConnection).
	RemoteAddr, UserAgent string
}

// ValidateScopes checks that scopes is a non-empty subset of AllScopes and
// returns it de-duplicated in canonical order.
func ValidateScopes(scopes []string) ([]string, error) {
	var out []string
	for _, s := range AllScopes {
		if slices.Contains(scopes, s) {
			out = append(out, s)
		}
	}
	for _, s := range scopes {
		if !slices.Contains(AllScopes, s) {
			return nil, &FieldError{"scope", fmt.Sprintf("unknown scope %q; use %s", s, strings.Join(AllScopes, " and/or "))}
		}
	}
	if len(out) == 0 {
		return nil, &FieldError{"scope", "choose at least one scope"}
	}
	return out, nil
}

// CreateConnection records a grant and seats it in the given projects (which
// must belong to the same workspace) in one transaction.
func (s *Store) CreateConnection(ctx context.Context, n NewConnection) (*Connection, error) {
	scopes, err := ValidateScopes(n.Scopes)
	if err != nil {
		return nil, err
	}
	var c *Connection
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		if c, err = insertConnection(ctx, tx, n, scopes); err != nil {
			return err
		}
		return seatConnection(ctx, tx, n.WorkspaceID, c.ID, n.ProjectIDs)
	})
	if err != nil {
		return nil, fmt.Errorf("store: create connection: %w", err)
	}
	return c, nil
}

func insertConnection(ctx context.Context, tx pgx.Tx, n NewConnection, scopes []string) (*Connection, error) {
	name := strings.TrimSpace(n.ClientName)
	if name == "" {
		name = "Unnamed client"
	}
	if err := CheckDisplayName("client_name", name); err != nil {
		return nil, err
	}
	if len([]rune(name)) > 200 {
		name = string([]rune(name)[:200])
	}
	c := &Connection{WorkspaceID: n.WorkspaceID, OwnerID: n.OwnerID, ClientID: n.ClientID, ClientName: name, Scopes: scopes}
	err := tx.QueryRow(ctx, `
		INSERT INTO connections (workspace_id, owner_id, client_id, client_name, scopes)
		VALUES ($1, $2, $3, $4, $5) RETURNING id, created_at`,
		n.WorkspaceID, n.OwnerID, n.ClientID, name, scopes).Scan(&c.ID, &c.CreatedAt)
	return c, err
}

// GetConnection returns a connection of the workspace (revoked ones included).
func (s *Store) GetConnection(ctx context.Context, workspaceID, id int64) (*Connection, error) {
	c := &Connection{}
	err := s.pool.QueryRow(ctx, `
		SELECT id, workspace_id, owner_id, client_id, client_name, scopes, sender_slug, created_at, last_seen_at, revoked_at
		FROM connections WHERE workspace_id = $1 AND id = $2`, workspaceID, id).
		Scan(&c.ID, &c.WorkspaceID, &c.OwnerID, &c.ClientID, &c.ClientName, &c.Scopes, &c.SenderSlug, &c.CreatedAt, &c.LastSeenAt, &c.RevokedAt)
	if err != nil {
		return nil, wrap("get connection", err)
	}
	return c, nil
}

// RevokeConnection ends a grant: its tokens are deleted, its agent's status is cleared, and the
// next tool call made with it is refused.
func (s *Store) RevokeConnection(ctx context.Context, workspaceID, id int64) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error { return revokeConnection(ctx, tx, workspaceID, id) })
	if err != nil {
		return fmt.Errorf("store: revoke connection: %w", err)
	}
	return nil
}

// RevokeConnectionAs is RevokeConnection by a person of the workspace:
// admins only, with its audit row.
func (s *Store) RevokeConnectionAs(ctx context.Context, a Actor, id int64) error {
	err := s.act(ctx, a, RoleAdmin, func(ac *action) error {
		var name string
		if err := ac.tx.QueryRow(ctx, `SELECT client_name FROM connections WHERE workspace_id = $1 AND id = $2`, a.WorkspaceID, id).Scan(&name); err != nil {
			return err
		}
		if err := revokeConnection(ctx, ac.tx, a.WorkspaceID, id); err != nil {
			return err
		}
		ac.audit(AuditConnRevoked, 0, name, map[string]any{"connection_id": id})
		return nil
	})
	if err != nil {
		return wrapAct("revoke connection", err)
	}
	return nil
}

func revokeConnection(ctx context.Context, tx pgx.Tx, workspaceID, id int64) error {
	tag, err := tx.Exec(ctx, `
		UPDATE connections SET revoked_at = coalesce(revoked_at, now())
		WHERE workspace_id = $1 AND id = $2`, workspaceID, id)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return ErrNotFound
	}
	for _, q := range []string{
		`DELETE FROM access_tokens WHERE connection_id = $1`,
		`DELETE FROM refresh_tokens WHERE connection_id = $1`,
		`DELETE FROM oauth_codes WHERE connection_id = $1`,
		`DELETE FROM statuses WHERE connection_id = $1`,
	} {
		if _, err := tx.Exec(ctx, q, id); err != nil {
			return err
		}
	}
	// Sidebars show it offline, its status gone.
	_, err = tx.Exec(ctx, `SELECT pg_notify($1, $2::bigint::text)`, PresenceChannel, workspaceID)
	return err
}

// NewToken returns a random opaque token with the given prefix and its SHA-256 hash.
func NewToken(prefix string) (token string, hash []byte) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on Linux
	}
	token = prefix + base64.RawURLEncoding.EncodeToString(b)
	return token, HashToken(token)
}

// HashToken is how every token, code and secret is stored: its SHA-256.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// Token prefixes make leaked tokens recognisable.
const (
	AccessTokenPrefix  = "osf_at_"
	RefreshTokenPrefix = "osf_rt_"
)

// MintAccessToken issues an access token for the connection, bound to resource, with scopes
// narrowed to those the connection holds.
func (s *Store) MintAccessToken(ctx context.Context, connectionID int64, resource string, scopes []string, ttl time.Duration) (string, time.Time, error) {
	token, hash := NewToken(AccessTokenPrefix)
	var expires time.Time
	err := s.pool.QueryRow(ctx, `
		INSERT INTO access_tokens (token_hash, connection_id, resource, scopes, expires_at)
		SELECT $1, c.id, $3, ARRAY(SELECT unnest($4::text[]) INTERSECT SELECT unnest(c.scopes) ORDER BY 1), now() + make_interval(secs => $5)
		FROM connections c WHERE c.id = $2 AND c.revoked_at IS NULL
		RETURNING expires_at`, hash, connectionID, resource, scopes, ttl.Seconds()).Scan(&expires)
	if err != nil {
		return "", time.Time{}, wrap("mint access token", err)
	}
	return token, expires, nil
}

// TokenInfo is what a valid access token says about its caller.
type TokenInfo struct {
	ConnectionID int64
	WorkspaceID  int64
	OwnerID      int64
	Scopes       []string
	ExpiresAt    time.Time
	Resource     string
	// Unread is the connection's unread mail when the token was checked.
	Unread Unread
}

// HasScope reports whether the token carries scope.
func (t *TokenInfo) HasScope(scope string) bool { return slices.Contains(t.Scopes, scope) }

// PresenceWriteInterval bounds how often a connection's last-seen time is written.
const PresenceWriteInterval = 30 * time.Second

// Presence tiers derived from a connection's last authenticated call.
const (
	PresenceActive  = "active"
	PresenceIdle    = "idle"
	PresenceAway    = "away"
	PresenceOffline = "offline"
)

// PresenceTier maps a last-seen time (nil: never) and revocation to a tier.
func PresenceTier(lastSeen *time.Time, revoked bool, now time.Time) string {
	if revoked || lastSeen == nil {
		return PresenceOffline
	}
	switch age := now.Sub(*lastSeen); {
	case age <= 2*time.Minute:
		return PresenceActive
	case age <= 30*time.Minute:
		return PresenceIdle
	case age <= 24*time.Hour:
		return PresenceAway
	default:
		return PresenceOffline
	}
}

// StaticTokenTTL is the life of a token minted without OAuth, for clients that
// only take a fixed bearer header.
const StaticTokenTTL = 365 * 24 * time.Hour

// StaticTokenRequest asks for a connection with a directly minted token.
type StaticTokenRequest struct {
	OwnerEmail   string
	ClientName   string
	Scopes       []string
	ProjectNames []string
	// Resource is the MCP endpoint the token is bound to (<base URL>/mcp).
	Resource string
}

// StaticToken is a new connection's token, shown once.
type StaticToken struct {
	ConnectionID int64
	Token        string
	ExpiresAt    time.Time
}

// CreateStaticToken creates a connection for the owner (seated in the named
// projects of the owner's workspace) and mints a long-lived access token.
func (s *Store) CreateStaticToken(ctx context.Context, r StaticTokenRequest) (*StaticToken, error) {
	var ownerID, wsID int64
	err := s.pool.QueryRow(ctx, `SELECT id, workspace_id FROM owners WHERE email = $1 AND removed_at IS NULL`, NormalizeEmail(r.OwnerEmail)).Scan(&ownerID, &wsID)
	if err != nil {
		return nil, wrap("create static token: owner "+r.OwnerEmail, err)
	}
	var projectIDs []int64
	for _, name := range r.ProjectNames {
		var id int64
		err := s.pool.QueryRow(ctx, `SELECT id FROM projects WHERE workspace_id = $1 AND name = $2`, wsID, name).Scan(&id)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, s.noSuchProject(ctx, wsID, name)
		}
		if err != nil {
			return nil, wrap("create static token: project "+name, err)
		}
		projectIDs = append(projectIDs, id)
	}
	c, tok, exp, err := s.CreateTokenConnection(ctx, NewConnection{WorkspaceID: wsID, OwnerID: ownerID, ClientName: r.ClientName, Scopes: r.Scopes, ProjectIDs: projectIDs}, r.Resource, StaticTokenTTL)
	if err != nil {
		return nil, err
	}
	return &StaticToken{ConnectionID: c.ID, Token: tok, ExpiresAt: exp}, nil
}

func (s *Store) noSuchProject(ctx context.Context, workspaceID int64, name string) error {
	var names []string
	if err := s.pool.QueryRow(ctx, `SELECT ARRAY(SELECT name FROM projects WHERE workspace_id = $1 ORDER BY lower(name), id)`,
		workspaceID).Scan(&names); err != nil {
		return fmt.Errorf("store: projects: %w", err)
	}
	msg := fmt.Sprintf("no project named %q in this workspace", name)
	if len(names) == 0 {
		msg += "; it has no projects yet: create one on the Projects page first"
	} else {
		quoted := make([]string, len(names))
		for i, n := range names {
			quoted[i] = strconv.Quote(n)
		}
		msg += "; its projects are " + strings.Join(quoted, ", ")
	}
	return &FieldError{"project", msg}
}

// ConnectionSummary is one row of the Connections page.
type ConnectionSummary struct {
	Connection
	// Handle and DisplayName are the claimed agent profile; nil before a claim.
	Handle      *string
	DisplayName *string
	Projects    []string
}

// ListConnections returns the workspace's live (not revoked) connections,
// newest first.
func (s *Store) ListConnections(ctx context.Context, workspaceID int64) ([]ConnectionSummary, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT c.id, c.workspace_id, c.owner_id, c.client_id, c.client_name, c.scopes, c.sender_slug,
			c.created_at, c.last_seen_at, c.revoked_at, p.handle, p.display_name,
			ARRAY(SELECT pr.name FROM project_seats ps
				JOIN projects pr ON pr.workspace_id = ps.workspace_id AND pr.id = ps.project_id
				WHERE ps.workspace_id = c.workspace_id AND ps.connection_id = c.id
				ORDER BY lower(pr.name), pr.id)
		FROM connections c
		LEFT JOIN agent_profiles p ON p.workspace_id = c.workspace_id AND p.connection_id = c.id
		WHERE c.workspace_id = $1 AND c.revoked_at IS NULL
		ORDER BY c.created_at DESC, c.id DESC`, workspaceID)
	if err != nil {
		return nil, fmt.Errorf("store: list connections: %w", err)
	}
	defer rows.Close()
	var out []ConnectionSummary
	for rows.Next() {
		var cs ConnectionSummary
		c := &cs.Connection
		if err := rows.Scan(&c.ID, &c.WorkspaceID, &c.OwnerID, &c.ClientID, &c.ClientName, &c.Scopes, &c.SenderSlug,
			&c.CreatedAt, &c.LastSeenAt, &c.RevokedAt, &cs.Handle, &cs.DisplayName, &cs.Projects); err != nil {
			return nil, fmt.Errorf("store: list connections: %w", err)
		}
		out = append(out, cs)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list connections: %w", err)
	}
	return out, nil
}

// CreateTokenConnection creates a connection (by workspace, owner and project ids) and mints its
// first access token for resource, without OAuth.
func (s *Store) CreateTokenConnection(ctx context.Context, n NewConnection, resource string, ttl time.Duration) (*Connection, string, time.Time, error) {
	c, err := s.CreateConnection(ctx, n)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	token, expires, err := s.MintAccessToken(ctx, c.ID, resource, c.Scopes, ttl)
	if err != nil {
		return nil, "", time.Time{}, err
	}
	return c, token, expires, nil
}

var useAccessTokenSQL = tokenRowsSQL + `
	SELECT t.id, t.workspace_id, t.owner_id, t.scopes, t.expires_at, t.resource, u.*
	FROM t CROSS JOIN LATERAL (` + unreadSQL("t.id", "t.sender_slug", "0") + `) u`

// UseAccessToken looks a token up by its hash and, in the same statement, marks its connection seen
// for presence (at most once per PresenceWriteInterval) and counts its unread mail
// (TokenInfo.Unread).
func (s *Store) UseAccessToken(ctx context.Context, token, resource string) (*TokenInfo, error) {
	ti := &TokenInfo{}
	var u unreadTargets
	key := sha256.Sum256([]byte(token))
	err := s.pool.QueryRow(ctx, useAccessTokenSQL, key[:], resource, PresenceWriteInterval.Seconds()).
		Scan(append([]any{&ti.ConnectionID, &ti.WorkspaceID, &ti.OwnerID, &ti.Scopes, &ti.ExpiresAt, &ti.Resource}, u.targets()...)...)
	if err != nil {
		s.tokens.forget(key)
		return nil, wrap("use access token", err)
	}
	ti.Unread = u.unread()
	s.tokens.put(key, *ti)
	return ti, nil
}

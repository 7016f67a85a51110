package store

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

func sameSoftwareSQL(c, cur string) string {
	return c + `.client_id IS NOT NULL AND (` + c + `.client_id = ` + cur + `.client_id OR (btrim(` + cur + `.client_name) <> ''
		AND ` + c + `.client_name = left(btrim(` + cur + `.client_name), 200)))`
}

// ContinuableConnection is a connection of the owner that an authorization of a client may
// continue.
type ContinuableConnection struct {
	ID int64
	// Handle and DisplayName are the claimed profile, empty before a claim.
	Handle      string
	DisplayName string
	ClientName  string
	LastSeenAt  *time.Time
	RevokedAt   *time.Time
	// Held is true when the client's own dynamic registration holds the connection.
	Held bool
	// Projects are the names of the projects it is seated in.
	Projects []string
}

const maxContinuable = 20

// ListContinuableConnections returns the owner's connections (revoked ones too) an authorization by
// clientID may continue (sameSoftwareSQL).
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

// ErrNotContinuable refuses a grant that names a connection the client may not continue.
var ErrNotContinuable = &FieldError{"agent", "that agent cannot sign in again with this client; choose one listed, or connect as a new agent"}

// GrantConnection is what an owner's approval of an OAuth client produces, in one transaction.
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

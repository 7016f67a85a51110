package store

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// ErrHandleRevoked means a handle belongs to a revoked connection of the workspace.
var ErrHandleRevoked = errors.New("handle held by a revoked connection")

// ErrNoProfile means the connection has not claimed an agent profile yet;
// status and notes hang off the profile.
var ErrNoProfile = errors.New("no profile claimed")

// Lengths of an agent handle, in characters.
const (
	MinHandleLen = 2
	MaxHandleLen = 31
)

// HandlePattern is the rule for an agent handle, the same in the tool schema and the database.
var HandlePattern = regexp.MustCompile(fmt.Sprintf(`^[a-z0-9][a-z0-9-]{%d,%d}$`, MinHandleLen-1, MaxHandleLen-1))

// MaxDisplayNameLen bounds an agent's display name, in characters.
const MaxDisplayNameLen = 80

// Profile is the agent identity a connection claims.
type Profile struct {
	ConnectionID int64
	WorkspaceID  int64
	Handle       string
	DisplayName  string
	// SenderSlug is assigned at the first claim and never changes afterwards,
	// even when the handle does.
	SenderSlug string
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// ValidateProfile trims and checks a handle and display name.
func ValidateProfile(handle, displayName string) (string, string, error) {
	displayName = strings.TrimSpace(displayName)
	if !HandlePattern.MatchString(handle) {
		return "", "", &FieldError{"handle", fmt.Sprintf("use %d to %d characters: lowercase letters, digits and '-', starting with a letter or digit", MinHandleLen, MaxHandleLen)}
	}
	if displayName == "" || utf8.RuneCountInString(displayName) > MaxDisplayNameLen {
		return "", "", &FieldError{"display_name", fmt.Sprintf("use 1 to %d characters", MaxDisplayNameLen)}
	}
	if err := CheckDisplayName("display_name", displayName); err != nil {
		return "", "", err
	}
	return handle, displayName, nil
}

// ClaimProfile creates or updates the profile of a connection. A handle held by another connection
// of the workspace gives ErrConflict, or ErrHandleRevoked when that connection is revoked.
func (s *Store) ClaimProfile(ctx context.Context, workspaceID, connectionID int64, handle, displayName string) (*Profile, error) {
	handle, displayName, err := ValidateProfile(handle, displayName)
	if err != nil {
		return nil, err
	}
	var p *Profile
	// A concurrent claim may take the same fallback slug between our read and write.
	for attempt := 0; ; attempt++ {
		p, err = s.claimProfileOnce(ctx, workspaceID, connectionID, handle, displayName)
		if isUniqueViolation(err, "connections_workspace_id_sender_slug_key") && attempt < 3 {
			continue
		}
		break
	}
	if isUniqueViolation(err, "agent_profiles_workspace_id_handle_key") {
		var revoked bool
		if err := s.pool.QueryRow(ctx, `
			SELECT c.revoked_at IS NOT NULL FROM agent_profiles p JOIN connections c ON c.id = p.connection_id
			WHERE p.workspace_id = $1 AND p.handle = $2`, workspaceID, handle).Scan(&revoked); err == nil && revoked {
			return nil, fmt.Errorf("store: claim profile: handle %q: %w", handle, ErrHandleRevoked)
		}
		return nil, fmt.Errorf("store: claim profile: handle %q: %w", handle, ErrConflict)
	}
	if err != nil {
		return nil, wrap("claim profile", err)
	}
	return p, nil
}

func (s *Store) claimProfileOnce(ctx context.Context, workspaceID, connectionID int64, handle, displayName string) (*Profile, error) {
	p := &Profile{ConnectionID: connectionID, WorkspaceID: workspaceID}
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		// Only a live connection of the workspace may claim.
		if err := tx.QueryRow(ctx, `
			INSERT INTO agent_profiles AS p (connection_id, workspace_id, handle, display_name)
			SELECT c.id, c.workspace_id, $3, $4 FROM connections c
			WHERE c.workspace_id = $1 AND c.id = $2 AND c.revoked_at IS NULL
			ON CONFLICT (connection_id) DO UPDATE
				SET handle = EXCLUDED.handle, display_name = EXCLUDED.display_name, updated_at = now()
			RETURNING p.handle, p.display_name, p.created_at, p.updated_at`,
			workspaceID, connectionID, handle, displayName).Scan(&p.Handle, &p.DisplayName, &p.CreatedAt, &p.UpdatedAt); err != nil {
			return err
		}
		// Assign the sender slug once: the first free one of ext-<handle>, ext-<handle>-2,
		// ext-<handle>-3, ….
		if err := tx.QueryRow(ctx, `
			UPDATE connections c SET sender_slug = coalesce(c.sender_slug, (
				SELECT cand FROM (
					SELECT 'ext-' || $3::text AS cand, 1 AS ord
					UNION ALL SELECT 'ext-' || $3::text || '-' || g, g FROM generate_series(2, 1000) g
				) x
				WHERE NOT EXISTS (SELECT 1 FROM connections o WHERE o.workspace_id = $1 AND o.sender_slug = x.cand)
				ORDER BY ord LIMIT 1))
			WHERE c.workspace_id = $1 AND c.id = $2
			RETURNING c.sender_slug`, workspaceID, connectionID, handle).Scan(&p.SenderSlug); err != nil {
			return err
		}
		// Sidebars show the new name (PresenceTopic, notified in the
		// transaction: a claim is rare; notify.go).
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2::bigint::text)`, PresenceChannel, workspaceID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

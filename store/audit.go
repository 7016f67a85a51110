package store

import (
	"context"
	"fmt"
	"regexp"
	"sort"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
)

// AuditKind names what an audit row records, "area.verb".
type AuditKind string

var auditKinds = struct {
	sync.Mutex
	labels map[AuditKind]string
}{labels: map[AuditKind]string{}}

var auditKindPattern = regexp.MustCompile(`^[a-z]+(\.[a-z_]+)+$`)

// RegisterAuditKind adds a kind of audit row and returns it; it panics on a
// malformed or repeated kind, at start.
func RegisterAuditKind(kind, label string) AuditKind {
	k := AuditKind(kind)
	if !auditKindPattern.MatchString(kind) || len(kind) > 60 {
		panic("store: audit kind " + kind + " is not area.verb")
	}
	auditKinds.Lock()
	defer auditKinds.Unlock()
	if _, dup := auditKinds.labels[k]; dup {
		panic("store: audit kind " + kind + " registered twice")
	}
	auditKinds.labels[k] = label
	return k
}

// AuditKinds lists the registered kinds, sorted.
func AuditKinds() []AuditKind {
	auditKinds.Lock()
	defer auditKinds.Unlock()
	out := make([]AuditKind, 0, len(auditKinds.labels))
	for k := range auditKinds.labels {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Label is the kind as the audit page says it.
func (k AuditKind) Label() string {
	auditKinds.Lock()
	defer auditKinds.Unlock()
	if l, ok := auditKinds.labels[k]; ok {
		return l
	}
	return string(k)
}

// Known reports whether the kind is registered.
func (k AuditKind) Known() bool {
	auditKinds.Lock()
	defer auditKinds.Unlock()
	_, ok := auditKinds.labels[k]
	return ok
}

// The kinds of this package's actions.
var (
	AuditSignIn          = RegisterAuditKind("account.sign_in", "Signed in")
	AuditSignOut         = RegisterAuditKind("account.sign_out", "Signed out")
	AuditEmailSettings   = RegisterAuditKind("account.email_settings", "Changed email settings")
	AuditPersonInvited   = RegisterAuditKind("person.invited", "Invited a person")
	AuditInviteRevoked   = RegisterAuditKind("person.invite_revoked", "Revoked an invitation")
	AuditPersonJoined    = RegisterAuditKind("person.joined", "Accepted an invitation")
	AuditRoleChanged     = RegisterAuditKind("person.role_changed", "Changed a role")
	AuditPersonRemoved   = RegisterAuditKind("person.removed", "Removed a person")
	AuditConnGranted     = RegisterAuditKind("connection.granted", "Granted a connection")
	AuditConnRevoked     = RegisterAuditKind("connection.revoked", "Revoked a connection")
	AuditWebhookCreated  = RegisterAuditKind("webhook.created", "Added a webhook")
	AuditWebhookEnabled  = RegisterAuditKind("webhook.enabled", "Enabled a webhook")
	AuditWebhookDisabled = RegisterAuditKind("webhook.disabled", "Disabled a webhook")
	AuditWebhookDeleted  = RegisterAuditKind("webhook.deleted", "Deleted a webhook")
	AuditProjectCreated  = RegisterAuditKind("project.created", "Created a project")
	AuditProjectRenamed  = RegisterAuditKind("project.renamed", "Renamed a project")
	AuditProjectSettings = RegisterAuditKind("project.question_settings", "Changed question settings")
	AuditAgentSeated     = RegisterAuditKind("project.seated", "Seated an agent")
	AuditAgentUnseated   = RegisterAuditKind("project.unseated", "Unseated an agent")
	AuditQuestionAnswer  = RegisterAuditKind("question.answered", "Answered a question")
	AuditApprovalDecided = RegisterAuditKind("approval.decided", "Decided a permission prompt")
	AuditSessionExported = RegisterAuditKind("session.exported", "Exported a session")
)

// AuditEntry is one row of the audit log.
type AuditEntry struct {
	ID          int64          `json:"id"`
	OwnerID     *int64         `json:"person_id"`
	OwnerName   string         `json:"person"`
	Kind        AuditKind      `json:"kind"`
	ProjectID   *int64         `json:"project_id"`
	ProjectName string         `json:"project,omitempty"`
	Subject     string         `json:"what"`
	Detail      map[string]any `json:"detail,omitempty"`
	RemoteAddr  string         `json:"address"`
	UserAgent   string         `json:"user_agent"`
	CreatedAt   time.Time      `json:"at"`
}

func insertAudit(ctx context.Context, tx pgx.Tx, a Actor, name string, e AuditEntry) error {
	if !e.Kind.Known() {
		return fmt.Errorf("store: audit kind %q is not registered", e.Kind)
	}
	if e.Detail == nil {
		e.Detail = map[string]any{}
	}
	var owner *int64
	if a.OwnerID != 0 {
		owner = &a.OwnerID
	}
	_, err := tx.Exec(ctx, `
		INSERT INTO audit_log (workspace_id, owner_id, owner_name, kind, project_id, subject, detail, remote_addr, user_agent)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		a.WorkspaceID, owner, shorten(name, MaxOwnerNameLen), string(e.Kind), e.ProjectID, shorten(e.Subject, 300), e.Detail,
		shorten(a.RemoteAddr, maxSignInAddr), shorten(a.UserAgent, maxSignInUserAgent))
	if err != nil {
		return fmt.Errorf("store: audit %s: %w", e.Kind, err)
	}
	return nil
}

// AuditFilter narrows the audit log: zero fields filter nothing.
type AuditFilter struct {
	OwnerID   int64
	Kind      AuditKind
	ProjectID int64
	Before    int64
	Limit     int
}

// AuditPageSize is how many rows a page of the audit log shows.
const AuditPageSize = 50

const auditSelect = `
	SELECT a.id, a.owner_id, a.owner_name, a.kind, a.project_id, coalesce(p.name, ''), a.subject, a.detail,
		a.remote_addr, a.user_agent, a.created_at
	FROM audit_log a LEFT JOIN projects p ON p.id = a.project_id AND p.workspace_id = a.workspace_id
	WHERE a.workspace_id = $1 AND ($2::bigint = 0 OR a.owner_id = $2) AND ($3::text = '' OR a.kind = $3)
		AND ($4::bigint = 0 OR a.project_id = $4) AND ($5::bigint = 0 OR a.id < $5)
	ORDER BY a.workspace_id, a.id DESC LIMIT $6`

// ListAudit returns the workspace's audit rows that f keeps, newest first,
// at most f.Limit (AuditPageSize when 0); admins only.
func (s *Store) ListAudit(ctx context.Context, a Actor, f AuditFilter) ([]AuditEntry, error) {
	var out []AuditEntry
	err := s.EachAudit(ctx, a, f, func(e *AuditEntry) error {
		out = append(out, *e)
		return nil
	})
	return out, err
}

// EachAudit calls each with the audit rows f keeps, newest first (every row when f.Limit is
// negative), reading them as it goes.
func (s *Store) EachAudit(ctx context.Context, a Actor, f AuditFilter, each func(*AuditEntry) error) error {
	limit := int64(f.Limit)
	switch {
	case limit == 0:
		limit = AuditPageSize
	case limit < 0:
		limit = 1 << 62
	}
	return s.act(ctx, a, RoleAdmin, func(ac *action) error {
		rows, err := ac.tx.Query(ctx, auditSelect, a.WorkspaceID, f.OwnerID, string(f.Kind), f.ProjectID, f.Before, limit)
		if err != nil {
			return fmt.Errorf("store: list audit: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			e := &AuditEntry{}
			var kind string
			if err := rows.Scan(&e.ID, &e.OwnerID, &e.OwnerName, &kind, &e.ProjectID, &e.ProjectName, &e.Subject, &e.Detail,
				&e.RemoteAddr, &e.UserAgent, &e.CreatedAt); err != nil {
				return fmt.Errorf("store: list audit: %w", err)
			}
			e.Kind = AuditKind(kind)
			if err := each(e); err != nil {
				return err
			}
		}
		return rows.Err()
	})
}

package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Approval states.
const (
	ApprovalPending  = "pending"
	ApprovalAllowed  = "allowed"
	ApprovalDenied   = "denied"
	ApprovalExpired  = "expired"
	ApprovalTerminal = "terminal"
)

// Limits of an approval, in characters.
const (
	MaxApprovalTool    = 200
	MaxApprovalSummary = 500
	MaxApprovalReason  = 2000
)

// Bounds and defaults of a project's approval settings.
const (
	MinApprovalWaitSeconds     = 10
	MaxApprovalWaitSeconds     = 600
	DefaultApprovalWaitSeconds = 120
	MaxApprovalDelayMinutes    = 60
)

// Approval is one permission prompt and where it stands.
type Approval struct {
	ID           int64
	WorkspaceID  int64
	ConnectionID int64
	// SessionID is the session the agent last worked in; nil: none (the approval shows in the inbox
	// only).
	SessionID *int64
	ProjectID *int64
	// AgentSlug, AgentName and AgentHandle (empty without a profile) are the
	// agent that asks.
	AgentSlug   string
	AgentName   string
	AgentHandle string
	// Tool is the client's tool, Summary a one-line summary of its input:
	// the agent's own, untrusted text.
	Tool    string
	Summary string
	Repo    string
	Branch  string
	State   string
	// Reason is the owner's reason for a denial, if they gave one.
	Reason string
	// DecidedBy (the owner's display name), DecidedByID and DecidedFrom (the address the decision
	// came from) are set once allowed or denied.
	DecidedBy   string
	DecidedByID *int64
	DecidedFrom string
	DecidedAt   *time.Time
	// ExpiresAt is when the hook stops waiting.
	ExpiresAt time.Time
	CreatedAt time.Time
	// SessionTitle, SessionType, SessionPublicID (how agents address it)
	// and ProjectName are where it was asked (empty: none).
	SessionTitle    string
	SessionType     string
	SessionPublicID string
	ProjectName     string
}

// Pending reports whether the approval still waits for a decision.
func (a *Approval) Pending() bool { return a.State == ApprovalPending }

// Who is how the agent is named to owners: @handle, else its name.
func (a *Approval) Who() string {
	if a.AgentHandle != "" {
		return "@" + a.AgentHandle
	}
	return a.AgentName
}

// Where is the repository and branch it works on, as one phrase.
func (a *Approval) Where() string {
	return strings.TrimSpace(a.Repo + " " + a.Branch)
}

// Headline is the one line that announces an approval everywhere (the desktop notification,
// webhooks, email).
func (a *Approval) Headline() string {
	what := "to use " + a.Tool
	if a.Summary != "" {
		if a.Tool == "Bash" {
			what = "to run `" + a.Summary + "`"
		} else {
			what = "to use " + a.Tool + ": `" + a.Summary + "`"
		}
	}
	s := a.Who() + " asks " + what
	if w := a.Where(); w != "" {
		s += " in " + w
	}
	return s
}

// ApprovalRequest is what a hook asks on behalf of its connection.
type ApprovalRequest struct {
	WorkspaceID  int64
	ConnectionID int64
	Tool         string
	Summary      string
	Repo         string
	Branch       string
	// ClientSession is the client's own session id (not osFoundry's).
	ClientSession string
}

// OneLine makes untrusted text one line: control characters and line
// breaks become spaces, runs of spaces one.
func OneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}

func (r *ApprovalRequest) validate() error {
	r.Tool, r.Summary, r.Repo, r.Branch = OneLine(r.Tool), OneLine(r.Summary), OneLine(r.Repo), OneLine(r.Branch)
	r.ClientSession = OneLine(r.ClientSession)
	switch {
	case r.Tool == "":
		return &FieldError{"tool", "name the tool the client asks to use"}
	case utf8.RuneCountInString(r.Tool) > MaxApprovalTool:
		return &FieldError{"tool", fmt.Sprintf("use at most %d characters", MaxApprovalTool)}
	case utf8.RuneCountInString(r.Summary) > MaxApprovalSummary:
		return &FieldError{"summary", fmt.Sprintf("use at most %d characters", MaxApprovalSummary)}
	case utf8.RuneCountInString(r.Repo) > 300:
		return &FieldError{"repo", "use at most 300 characters"}
	case utf8.RuneCountInString(r.Branch) > 200:
		return &FieldError{"branch", "use at most 200 characters"}
	case utf8.RuneCountInString(r.ClientSession) > 200:
		return &FieldError{"client_session", "use at most 200 characters"}
	}
	return nil
}

// ErrApprovalsOff means the project of the agent's session takes no
// approvals: the hook gives no verdict at once.
var ErrApprovalsOff = errors.New("approvals are off for this project")

const approvalColumns = `a.id, a.workspace_id, a.connection_id, a.session_id, a.project_id, a.agent_slug, a.agent_name,
	coalesce(a.agent_handle, ''), a.tool, a.summary, coalesce(a.repo, ''), coalesce(a.branch, ''), a.state, coalesce(a.reason, ''),
	coalesce(a.decided_by_name, ''), a.decided_by, coalesce(a.decided_from, ''), a.decided_at, a.expires_at, a.created_at,
	coalesce(s.title, ''), coalesce(s.session_type, ''), coalesce(s.public_id, ''), coalesce(p.name, '')`

const approvalFrom = ` FROM approvals a LEFT JOIN sessions s ON s.id = a.session_id LEFT JOIN projects p ON p.id = a.project_id `

func scanApproval(row pgx.Row) (*Approval, error) {
	var a Approval
	err := row.Scan(&a.ID, &a.WorkspaceID, &a.ConnectionID, &a.SessionID, &a.ProjectID, &a.AgentSlug, &a.AgentName,
		&a.AgentHandle, &a.Tool, &a.Summary, &a.Repo, &a.Branch, &a.State, &a.Reason,
		&a.DecidedBy, &a.DecidedByID, &a.DecidedFrom, &a.DecidedAt, &a.ExpiresAt, &a.CreatedAt, &a.SessionTitle, &a.SessionType, &a.SessionPublicID, &a.ProjectName)
	if err != nil {
		return nil, err
	}
	return &a, nil
}

func collectApprovals(rows pgx.Rows) ([]Approval, error) {
	return pgx.CollectRows(rows, func(r pgx.CollectableRow) (Approval, error) {
		a, err := scanApproval(r)
		if err != nil {
			return Approval{}, err
		}
		return *a, nil
	})
}

const approvalWhereSQL = `
	SELECT c.sender_slug, coalesce(ap.display_name, c.client_name), ap.handle, last.session_id, last.project_id,
		coalesce(p.approvals_enabled, true), coalesce(p.approval_wait_seconds, 120), coalesce(p.approval_delay_minutes, 0)
	FROM connections c
	LEFT JOIN agent_profiles ap ON ap.connection_id = c.id
	LEFT JOIN LATERAL (
		SELECT n.session_id, s.project_id FROM notes n
		JOIN sessions s ON s.id = n.session_id
		JOIN invitations i ON i.session_id = n.session_id AND i.connection_id = c.id
		WHERE n.sender_connection_id = c.id
		ORDER BY n.id DESC LIMIT 1
	) last ON true
	LEFT JOIN projects p ON p.id = last.project_id
	WHERE c.id = $1 AND c.workspace_id = $2 AND c.revoked_at IS NULL`

// RequestApproval records a connection's permission prompt, pending, in the session it last worked
// in (or none), to wait its project's approval wait.
func (s *Store) RequestApproval(ctx context.Context, in ApprovalRequest) (*Approval, error) {
	if err := in.validate(); err != nil {
		return nil, err
	}
	var slug *string
	var name string
	var handle *string
	var sessionID, projectID *int64
	var enabled bool
	var wait, delay int
	err := s.pool.QueryRow(ctx, approvalWhereSQL, in.ConnectionID, in.WorkspaceID).
		Scan(&slug, &name, &handle, &sessionID, &projectID, &enabled, &wait, &delay)
	if err != nil {
		return nil, wrap("request approval", err)
	}
	if !enabled {
		return nil, ErrApprovalsOff
	}
	agentSlug := derefOr(slug, fmt.Sprintf("connection-%d", in.ConnectionID))
	var a *Approval
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		var id int64
		err := tx.QueryRow(ctx, `
			INSERT INTO approvals (workspace_id, connection_id, session_id, project_id, agent_slug, agent_name, agent_handle,
				client_session, tool, summary, repo, branch, expires_at, notice_due_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, NULLIF($8, ''), $9, $10, NULLIF($11, ''), NULLIF($12, ''),
				now() + make_interval(secs => $13), now() + make_interval(secs => $14 * $15::float8))
			RETURNING id`, in.WorkspaceID, in.ConnectionID, sessionID, projectID, agentSlug, clip(name, 200), handle,
			in.ClientSession, in.Tool, in.Summary, in.Repo, in.Branch, wait, delay, s.questionMinute.Seconds()).Scan(&id)
		if err != nil {
			return err
		}
		if a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+approvalFrom+`WHERE a.id = $1`, id)); err != nil {
			return err
		}
		if a.SessionID != nil {
			_, err = appendEvent(ctx, tx, *a.SessionID, "approval_requested", nil, map[string]any{
				"approval_id": a.ID, "tool": a.Tool, "summary": a.Summary, "state": a.State, "expires_at": a.ExpiresAt,
			})
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: request approval: %w", err)
	}
	s.notifyAfterCommit(ApprovalTopic.notification(a.ID), TimerTopic.notification(struct{}{}))
	return a, nil
}

// AgentApproval returns an approval the connection asked, as it stands.
func (s *Store) AgentApproval(ctx context.Context, workspaceID, connectionID, id int64) (*Approval, error) {
	a, err := scanApproval(s.pool.QueryRow(ctx, `SELECT `+approvalColumns+approvalFrom+`
		WHERE a.id = $1 AND a.workspace_id = $2 AND a.connection_id = $3`, id, workspaceID, connectionID))
	if err != nil {
		return nil, wrap("agent approval", err)
	}
	return a, nil
}

// AgentSessionApprovals returns the connection's approvals of the last day in a session (as agents
// address it), newest first, at most limit.
func (s *Store) AgentSessionApprovals(ctx context.Context, workspaceID, connectionID int64, sessionType, publicID string, limit int) ([]Approval, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+approvalColumns+approvalFrom+`
		WHERE s.workspace_id = $1 AND s.session_type = $3 AND s.public_id = $4 AND a.session_id = s.id AND a.connection_id = $2
			AND a.created_at > now() - interval '1 day'
		ORDER BY a.id DESC LIMIT $5`, workspaceID, connectionID, sessionType, publicID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: agent session approvals: %w", err)
	}
	out, err := collectApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("store: agent session approvals: %w", err)
	}
	return out, nil
}

// OwnerApproval returns an approval of the owner's workspace.
func (s *Store) OwnerApproval(ctx context.Context, workspaceID, id int64) (*Approval, error) {
	a, err := scanApproval(s.pool.QueryRow(ctx, `SELECT `+approvalColumns+approvalFrom+`
		WHERE a.id = $1 AND a.workspace_id = $2`, id, workspaceID))
	if err != nil {
		return nil, wrap("owner approval", err)
	}
	return a, nil
}

// EndApproval ends a connection's pending approval without a decision.
func (s *Store) EndApproval(ctx context.Context, workspaceID, connectionID, id int64, state string) (*Approval, error) {
	if state != ApprovalExpired && state != ApprovalTerminal {
		return nil, &FieldError{"state", "use expired or terminal"}
	}
	var a *Approval
	changed := false
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE approvals SET state = $4, decided_at = now(), notice_due_at = NULL
			WHERE id = $1 AND workspace_id = $2 AND connection_id = $3 AND state = 'pending'
				AND ($4 <> 'expired' OR expires_at <= now())`, id, workspaceID, connectionID, state)
		if err != nil {
			return err
		}
		changed = tag.RowsAffected() == 1
		if a, err = scanApproval(tx.QueryRow(ctx, `SELECT `+approvalColumns+approvalFrom+`
			WHERE a.id = $1 AND a.workspace_id = $2 AND a.connection_id = $3`, id, workspaceID, connectionID)); err != nil {
			return err
		}
		if changed {
			return approvalDecidedEvent(ctx, tx, a)
		}
		return nil
	})
	if err != nil {
		return nil, wrap("end approval", err)
	}
	if changed {
		s.notifyAfterCommit(ApprovalTopic.notification(a.ID))
	}
	return a, nil
}

// PendingApprovals returns the workspace's approvals waiting for a decision (of one session when
// sessionID is not 0), newest first, at most limit.
func (s *Store) PendingApprovals(ctx context.Context, workspaceID, sessionID int64, limit int) ([]Approval, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+approvalColumns+approvalFrom+`
		WHERE a.workspace_id = $1 AND a.state = 'pending' AND a.expires_at > now() AND ($2::bigint = 0 OR a.session_id = $2)
		ORDER BY a.workspace_id, a.id DESC LIMIT $3`, workspaceID, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: pending approvals: %w", err)
	}
	out, err := collectApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("store: pending approvals: %w", err)
	}
	return out, nil
}

// SessionApprovals returns a session's approvals of any state, newest first, at most limit: what
// its page shows.
func (s *Store) SessionApprovals(ctx context.Context, workspaceID, sessionID int64, limit int) ([]Approval, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+approvalColumns+approvalFrom+`
		WHERE a.workspace_id = $1 AND a.session_id = $2
		ORDER BY a.session_id, a.id DESC LIMIT $3`, workspaceID, sessionID, limit)
	if err != nil {
		return nil, fmt.Errorf("store: session approvals: %w", err)
	}
	out, err := collectApprovals(rows)
	if err != nil {
		return nil, fmt.Errorf("store: session approvals: %w", err)
	}
	now := time.Now()
	for i := range out {
		if out[i].Pending() && !out[i].ExpiresAt.After(now) {
			out[i].State = ApprovalExpired
		}
	}
	return out, nil
}

func clip(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n])
}

package store

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"
)

// Webhook endpoint kinds: what the body of a delivery looks like.
const (
	// WebhookSlack sends a Slack-compatible incoming-webhook body {"text": …}.
	WebhookSlack = "slack"
	// WebhookJSON sends osFoundry's own JSON event.
	WebhookJSON = "json"
)

// Which notes fire an endpoint. Analysis notes are owner-only and never
// leave the server, whichever is chosen.
const (
	// FiresAgents: notes posted by agents (the default).
	FiresAgents = "agents"
	// FiresAll: every note and reply, the owners' included.
	FiresAll = "all"
)

// MaxWebhookURLLen bounds an endpoint URL, in bytes.
const MaxWebhookURLLen = 2048

const webhookSecretLen = 32

// Delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// WebhookEndpoint is a URL a project's notes are delivered to.
type WebhookEndpoint struct {
	ID          int64
	WorkspaceID int64
	ProjectID   int64
	URL         string
	Kind        string
	Fires       string
	Enabled     bool
	CreatedAt   time.Time
	// Pending counts deliveries not yet delivered or failed (list only).
	Pending int
	// Last is the newest delivery, nil when there is none (list only).
	Last *WebhookDelivery
}

// NewWebhookEndpoint is the input of CreateWebhookEndpoint.
type NewWebhookEndpoint struct {
	WorkspaceID int64
	ProjectID   int64
	URL         string
	Kind        string
	// Fires is FiresAgents or FiresAll; empty means FiresAgents.
	Fires string
}

// Validate trims and checks an endpoint; a refusal names the field (url,
// kind or fires).
func (n *NewWebhookEndpoint) Validate() error {
	n.URL = strings.TrimSpace(n.URL)
	if err := validateWebhookURL(n.URL); err != nil {
		return err
	}
	if n.Kind != WebhookSlack && n.Kind != WebhookJSON {
		return &FieldError{"kind", "choose Slack-compatible or JSON"}
	}
	if n.Fires == "" {
		n.Fires = FiresAgents
	}
	if n.Fires != FiresAgents && n.Fires != FiresAll {
		return &FieldError{"fires", "choose agents' notes or all notes"}
	}
	return nil
}

func validateWebhookURL(raw string) error {
	if raw == "" {
		return &FieldError{"url", "enter the URL deliveries are posted to"}
	}
	if len(raw) > MaxWebhookURLLen {
		return &FieldError{"url", "use a URL of at most 2 KiB (2048 bytes)"}
	}
	if strings.IndexFunc(raw, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0 {
		return &FieldError{"url", "a URL has no spaces or control characters"}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return &FieldError{"url", "enter a full URL, like https://hooks.example.com/osfoundry"}
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return &FieldError{"url", "use an http:// or https:// URL"}
	}
	if u.Hostname() == "" {
		return &FieldError{"url", "enter a full URL, like https://hooks.example.com/osfoundry"}
	}
	if u.User != nil {
		return &FieldError{"url", "remove the user name and password from the URL; deliveries are signed instead"}
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return &FieldError{"url", "remove the #fragment; it is never sent"}
	}
	return nil
}

// WebhookSecret formats a signing key as Standard Webhooks libraries take it.
func WebhookSecret(key []byte) string {
	return "whsec_" + base64.StdEncoding.EncodeToString(key)
}

const endpointColumns = `e.id, e.workspace_id, e.project_id, e.url, e.kind, e.fires, e.enabled, e.created_at`

func scanEndpoint(row pgx.Row, extra ...any) (*WebhookEndpoint, error) {
	e := &WebhookEndpoint{}
	err := row.Scan(append([]any{&e.ID, &e.WorkspaceID, &e.ProjectID, &e.URL, &e.Kind, &e.Fires, &e.Enabled, &e.CreatedAt}, extra...)...)
	return e, err
}

// CreateWebhookEndpoint adds an enabled endpoint to a project of the
// workspace (ErrNotFound when there is no such project) and returns it with
// its signing secret, "whsec_<base64>", which is shown to the owner once.
func (s *Store) CreateWebhookEndpoint(ctx context.Context, in NewWebhookEndpoint) (*WebhookEndpoint, string, error) {
	return s.createWebhookEndpointIn(ctx, s.pool, in)
}

func (s *Store) createWebhookEndpointIn(ctx context.Context, q querier, in NewWebhookEndpoint) (*WebhookEndpoint, string, error) {
	if err := in.Validate(); err != nil {
		return nil, "", err
	}
	key := make([]byte, webhookSecretLen)
	if _, err := rand.Read(key); err != nil {
		return nil, "", fmt.Errorf("store: create webhook: %w", err)
	}
	e, err := scanEndpoint(q.QueryRow(ctx, `
		INSERT INTO webhook_endpoints AS e (workspace_id, project_id, url, kind, fires, secret)
		SELECT p.workspace_id, p.id, $3, $4, $5, $6 FROM projects p WHERE p.workspace_id = $1 AND p.id = $2
		RETURNING `+endpointColumns, in.WorkspaceID, in.ProjectID, in.URL, in.Kind, in.Fires, key))
	if err != nil {
		return nil, "", wrap("create webhook", err)
	}
	return e, WebhookSecret(key), nil
}

// ListWebhookEndpoints returns a project's endpoints, oldest first, each
// with its pending count and newest delivery.
func (s *Store) ListWebhookEndpoints(ctx context.Context, workspaceID, projectID int64) ([]WebhookEndpoint, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT `+endpointColumns+`,
			(SELECT count(*) FROM webhook_deliveries d WHERE d.endpoint_id = e.id AND d.state = 'pending'),
			last.id, last.state, last.attempts, last.response_code, last.created_at
		FROM webhook_endpoints e
		LEFT JOIN LATERAL (
			SELECT d.id, d.state, d.attempts, d.response_code, d.created_at FROM webhook_deliveries d
			WHERE d.endpoint_id = e.id ORDER BY d.endpoint_id, d.id DESC LIMIT 1
		) last ON true
		WHERE e.workspace_id = $1 AND e.project_id = $2
		ORDER BY e.id`, workspaceID, projectID)
	if err != nil {
		return nil, fmt.Errorf("store: list webhooks: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (WebhookEndpoint, error) {
		var lastID *int64
		var lastState *string
		var lastAttempts *int
		var lastCode *int
		var lastAt *time.Time
		var pending int
		e, err := scanEndpoint(r, &pending, &lastID, &lastState, &lastAttempts, &lastCode, &lastAt)
		if err != nil {
			return WebhookEndpoint{}, err
		}
		e.Pending = pending
		if lastID != nil {
			e.Last = &WebhookDelivery{ID: *lastID, State: *lastState, Attempts: *lastAttempts, ResponseCode: lastCode, CreatedAt: *lastAt}
		}
		return *e, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: list webhooks: %w", err)
	}
	return out, nil
}

// GetWebhookEndpoint returns an endpoint of a project of the workspace, or ErrNotFound.
func (s *Store) GetWebhookEndpoint(ctx context.Context, workspaceID, projectID, id int64) (*WebhookEndpoint, error) {
	e, err := scanEndpoint(s.pool.QueryRow(ctx, `
		SELECT `+endpointColumns+` FROM webhook_endpoints e
		WHERE e.workspace_id = $1 AND e.project_id = $2 AND e.id = $3`, workspaceID, projectID, id))
	if err != nil {
		return nil, wrap("get webhook", err)
	}
	return e, nil
}

// SetWebhookEndpointEnabled enables or disables an endpoint.
func (s *Store) SetWebhookEndpointEnabled(ctx context.Context, workspaceID, projectID, id int64, enabled bool) error {
	return s.setWebhookEndpointEnabledIn(ctx, s.pool, workspaceID, projectID, id, enabled)
}

func (s *Store) setWebhookEndpointEnabledIn(ctx context.Context, q querier, workspaceID, projectID, id int64, enabled bool) error {
	var n, woken int
	err := q.QueryRow(ctx, `
		WITH u AS (
			UPDATE webhook_endpoints SET enabled = $4 WHERE workspace_id = $1 AND project_id = $2 AND id = $3 RETURNING id
		)
		SELECT (SELECT count(*) FROM u), (SELECT count(*) FROM u, LATERAL (SELECT pg_notify($5, '') WHERE $4) wake)`,
		workspaceID, projectID, id, enabled, WebhooksChannel).Scan(&n, &woken)
	if err != nil {
		return fmt.Errorf("store: enable webhook: %w", err)
	}
	if n == 0 {
		return fmt.Errorf("store: enable webhook: %w", ErrNotFound)
	}
	return nil
}

// DeleteWebhookEndpoint removes an endpoint with its delivery log and its
// pending deliveries.
func (s *Store) DeleteWebhookEndpoint(ctx context.Context, workspaceID, projectID, id int64) error {
	return s.deleteWebhookEndpointIn(ctx, s.pool, workspaceID, projectID, id)
}

func (s *Store) deleteWebhookEndpointIn(ctx context.Context, q querier, workspaceID, projectID, id int64) error {
	tag, err := q.Exec(ctx, `DELETE FROM webhook_endpoints WHERE workspace_id = $1 AND project_id = $2 AND id = $3`,
		workspaceID, projectID, id)
	if err != nil {
		return fmt.Errorf("store: delete webhook: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("store: delete webhook: %w", ErrNotFound)
	}
	return nil
}

// ErrWebhookDisabled refuses a test delivery to a disabled endpoint.
var ErrWebhookDisabled = &FieldError{"endpoint", "enable the endpoint to send it a test"}

// QueueWebhookTest adds a test delivery to an enabled endpoint's outbox,
// behind the deliveries already waiting there, and wakes the senders
// (WebhookTopic, notified by the statement that queues it; notify.go).
func (s *Store) QueueWebhookTest(ctx context.Context, workspaceID, projectID, id int64) error {
	return s.queueWebhookTestIn(ctx, s.pool, workspaceID, projectID, id)
}

func (s *Store) queueWebhookTestIn(ctx context.Context, q querier, workspaceID, projectID, id int64) error {
	var enabled bool
	var woken int
	err := q.QueryRow(ctx, `
		WITH e AS (
			SELECT id, enabled FROM webhook_endpoints WHERE workspace_id = $1 AND project_id = $2 AND id = $3
		), ins AS (
			INSERT INTO webhook_deliveries (endpoint_id) SELECT id FROM e WHERE enabled RETURNING id
		)
		SELECT e.enabled, (SELECT count(*) FROM ins, LATERAL (SELECT pg_notify($4, '')) wake) FROM e`,
		workspaceID, projectID, id, WebhooksChannel).Scan(&enabled, &woken)
	if err != nil {
		return wrap("queue webhook test", err)
	}
	if !enabled {
		return ErrWebhookDisabled
	}
	return nil
}

// RetryWebhookDelivery puts a failed delivery of an endpoint of a project of the workspace back in
// the outbox, due now, and wakes the senders.
func (s *Store) RetryWebhookDelivery(ctx context.Context, workspaceID, projectID, endpointID, deliveryID int64) error {
	return s.retryWebhookDeliveryIn(ctx, s.pool, workspaceID, projectID, endpointID, deliveryID)
}

func (s *Store) retryWebhookDeliveryIn(ctx context.Context, q querier, workspaceID, projectID, endpointID, deliveryID int64) error {
	var retried int
	err := q.QueryRow(ctx, `
		WITH target AS (
			SELECT d.id, d.state FROM webhook_endpoints e JOIN webhook_deliveries d ON d.endpoint_id = e.id
			WHERE e.workspace_id = $1 AND e.project_id = $2 AND e.id = $3 AND d.id = $4
		), up AS (
			UPDATE webhook_deliveries d SET state = 'pending', next_attempt_at = now(), claimed_until = NULL, finished_at = NULL
			FROM target t WHERE d.id = t.id AND t.state = 'failed'
			RETURNING d.id
		)
		SELECT (SELECT count(*) FROM up) FROM target`, workspaceID, projectID, endpointID, deliveryID).Scan(&retried)
	if err != nil {
		return wrap("retry webhook delivery", err)
	}
	if retried > 0 {
		s.notifyAfterCommit(WebhookTopic.notification(struct{}{}))
	}
	return nil
}

// WebhookDelivery is one row of an endpoint's delivery log.
type WebhookDelivery struct {
	ID int64
	// NoteID is nil for a test delivery; NoteSubject and SessionTitle
	// describe the note otherwise.
	NoteID       *int64
	NoteSubject  string
	SessionTitle string
	State        string
	Attempts     int
	// InFlight is true while a sender holds the delivery.
	InFlight bool
	// NextAttemptAt is when a pending delivery is tried next.
	NextAttemptAt time.Time
	ResponseCode  *int
	LastError     string
	CreatedAt     time.Time
	FinishedAt    *time.Time
}

// DeliveryLogSize is how many deliveries an endpoint's log keeps and shows.
const DeliveryLogSize = 50

// ListWebhookDeliveries returns the newest DeliveryLogSize deliveries of an
// endpoint of a project of the workspace, newest first (ErrNotFound when the
// endpoint is not there).
func (s *Store) ListWebhookDeliveries(ctx context.Context, workspaceID, projectID, endpointID int64) ([]WebhookDelivery, error) {
	rows, err := s.pool.Query(ctx, `
		SELECT d.id, d.note_id, coalesce(n.subject, ''), coalesce(ss.title, ''), d.state, d.attempts,
			coalesce(d.claimed_until > now(), false), d.next_attempt_at, d.response_code, coalesce(d.last_error, ''),
			d.created_at, d.finished_at
		FROM webhook_endpoints e
		JOIN webhook_deliveries d ON d.endpoint_id = e.id
		LEFT JOIN notes n ON n.id = d.note_id
		LEFT JOIN sessions ss ON ss.id = n.session_id
		WHERE e.workspace_id = $1 AND e.project_id = $2 AND e.id = $3
		ORDER BY d.endpoint_id, d.id DESC
		LIMIT $4`, workspaceID, projectID, endpointID, DeliveryLogSize)
	if err != nil {
		return nil, fmt.Errorf("store: list deliveries: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (WebhookDelivery, error) {
		var d WebhookDelivery
		err := r.Scan(&d.ID, &d.NoteID, &d.NoteSubject, &d.SessionTitle, &d.State, &d.Attempts, &d.InFlight,
			&d.NextAttemptAt, &d.ResponseCode, &d.LastError, &d.CreatedAt, &d.FinishedAt)
		return d, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: list deliveries: %w", err)
	}
	return out, nil
}

-- Webhooks (docs/webhooks.md): per-project endpoints, and an outbox of deliveries
-- written in the same transaction as the note that fires them.

CREATE TABLE webhook_endpoints (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL,
    project_id   bigint NOT NULL,
    url          text NOT NULL CHECK (octet_length(url) BETWEEN 1 AND 2048 AND url ~ '^https?://'),
    -- slack: a Slack-compatible {"text": …} body; json: our signed event.
    kind         text NOT NULL CHECK (kind IN ('slack', 'json')),
    -- Which notes fire it: agents' notes only, or every note (analysis notes never).
    fires        text NOT NULL DEFAULT 'agents' CHECK (fires IN ('agents', 'all')),
    -- The Standard Webhooks signing key (the bytes behind "whsec_<base64>").
    secret       bytea NOT NULL CHECK (octet_length(secret) BETWEEN 24 AND 64),
    enabled      boolean NOT NULL DEFAULT true,
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id),
    FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id) ON DELETE CASCADE
);
-- insertNote finds the enabled endpoints of a note's project.
CREATE INDEX webhook_endpoints_project_idx ON webhook_endpoints (project_id) WHERE enabled;

-- The outbox: one row per (endpoint, note), or per "Send test". A row is
-- pending until delivered or failed. A sender claims the oldest pending row
-- of an endpoint by setting claimed_until (a lease, so a crash mid-delivery
-- leaves it to be retried once the lease runs out) and bumping attempts
-- (which also fences a late result of an expired lease).
CREATE TABLE webhook_deliveries (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    endpoint_id     bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    -- NULL for a test delivery.
    note_id         bigint REFERENCES notes (id) ON DELETE CASCADE,
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
    attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    claimed_until   timestamptz,
    -- The HTTP status of the last attempt (NULL: no answer) and what went wrong.
    response_code   integer CHECK (response_code BETWEEN 100 AND 599),
    last_error      text CHECK (char_length(last_error) <= 300),
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    CHECK ((state = 'pending') = (finished_at IS NULL))
);
-- The claim walks the pending rows of each endpoint in id order.
CREATE INDEX webhook_deliveries_pending_idx ON webhook_deliveries (endpoint_id, id) WHERE state = 'pending';
-- The delivery log: an endpoint's newest rows.
CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, id DESC);
CREATE INDEX webhook_deliveries_note_idx ON webhook_deliveries (note_id) WHERE note_id IS NOT NULL;

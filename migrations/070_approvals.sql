-- Approvals (store/approvals.go): a client's permission prompt, raised by
-- its PermissionRequest hook, that an owner allows or denies from anywhere.
-- The hook waits for the decision; silence is never consent.

-- Per project: whether its agents' prompts come here at all, how long the
-- hook waits for a decision (install writes it as the hook's timeout), and
-- how long an approval waits on the page before webhooks and email.
ALTER TABLE projects
    ADD COLUMN approvals_enabled boolean NOT NULL DEFAULT true,
    ADD COLUMN approval_wait_seconds integer NOT NULL DEFAULT 120 CHECK (approval_wait_seconds BETWEEN 10 AND 600),
    ADD COLUMN approval_delay_minutes integer NOT NULL DEFAULT 0 CHECK (approval_delay_minutes BETWEEN 0 AND 60);

-- One row per prompt. state moves once, from pending to allowed or denied
-- (the first owner's decision, one conditional UPDATE), expired (nobody
-- decided within the wait: the hook gave no verdict) or terminal (the
-- client's own prompt was answered first). The decision's who, when and
-- from where stay for the audit log. session_id is the session the agent
-- last worked in (none: the inbox only); the summary is the agent's
-- untrusted text.
CREATE TABLE approvals (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id     bigint NOT NULL,
    connection_id    bigint NOT NULL,
    session_id       bigint,
    project_id       bigint,
    agent_slug       text NOT NULL CHECK (char_length(agent_slug) BETWEEN 1 AND 100),
    agent_name       text NOT NULL CHECK (char_length(agent_name) BETWEEN 1 AND 200),
    agent_handle     text CHECK (char_length(agent_handle) BETWEEN 1 AND 100),
    client_session   text CHECK (char_length(client_session) <= 200),
    tool             text NOT NULL CHECK (char_length(tool) BETWEEN 1 AND 200),
    summary          text NOT NULL CHECK (char_length(summary) <= 500),
    repo             text CHECK (char_length(repo) <= 300),
    branch           text CHECK (char_length(branch) <= 200),
    state            text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'allowed', 'denied', 'expired', 'terminal')),
    reason           text CHECK (char_length(reason) BETWEEN 1 AND 2000),
    decided_by       bigint,
    decided_by_name  text CHECK (char_length(decided_by_name) BETWEEN 1 AND 80),
    decided_from     text CHECK (char_length(decided_from) <= 100),
    decided_at       timestamptz,
    expires_at       timestamptz NOT NULL,
    -- When webhooks and email go out for a pending approval; NULL once done.
    notice_due_at    timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    CHECK ((state = 'pending') = (decided_at IS NULL)),
    CHECK ((state IN ('allowed', 'denied')) = (decided_by_name IS NOT NULL)),
    CHECK (state IN ('pending', 'expired', 'terminal') OR decided_from IS NOT NULL),
    CHECK (state = 'denied' OR reason IS NULL),
    CHECK (state = 'pending' OR notice_due_at IS NULL),
    FOREIGN KEY (workspace_id, connection_id) REFERENCES connections (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, session_id) REFERENCES sessions (workspace_id, id) ON DELETE SET NULL (session_id),
    FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id) ON DELETE SET NULL (project_id),
    FOREIGN KEY (workspace_id, decided_by) REFERENCES owners (workspace_id, id) ON DELETE SET NULL (decided_by)
);
-- The inbox's approvals waiting, and a session page's.
CREATE INDEX approvals_pending_idx ON approvals (workspace_id, id) WHERE state = 'pending';
CREATE INDEX approvals_session_idx ON approvals (session_id, id DESC) WHERE session_id IS NOT NULL;
CREATE INDEX approvals_connection_idx ON approvals (connection_id, id DESC);
-- The timer runners' claim: the notices due.
CREATE INDEX approvals_notice_idx ON approvals (notice_due_at) WHERE notice_due_at IS NOT NULL;

-- What agents read forward (poll_resource_events) of a session's approvals.
ALTER TABLE resource_events DROP CONSTRAINT resource_events_kind_check;
ALTER TABLE resource_events ADD CONSTRAINT resource_events_kind_check
    CHECK (kind IN ('note_posted', 'participant_invited', 'participant_updated', 'participant_removed', 'session_updated',
        'question_answered', 'question_expired', 'approval_requested', 'approval_decided'));

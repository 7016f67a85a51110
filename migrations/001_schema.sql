-- The whole data model: workspaces and everything in them. Every row that
-- belongs to a workspace carries workspace_id, and references between rows of
-- one workspace are composite foreign keys on (workspace_id, id), so nothing
-- can point across workspaces.

CREATE TABLE workspaces (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Shared secrets every replica must agree on (for example the key that derives
-- refresh-token rotations). Values are random bytes written once.
CREATE TABLE server_secrets (
    name       text PRIMARY KEY,
    value      bytea NOT NULL CHECK (octet_length(value) >= 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE owners (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id  bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    email         text NOT NULL CHECK (email = lower(email) AND email ~ '^[^@\s]+@[^@\s]+$' AND char_length(email) <= 254),
    display_name  text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 80),
    password_hash text NOT NULL CHECK (password_hash LIKE '$argon2id$%'),
    created_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id)
);
-- Sign-in is by email alone, so an email is unique across the install.
CREATE UNIQUE INDEX owners_email_key ON owners (email);

-- Failed sign-in attempts, for throttling across replicas.
CREATE TABLE login_failures (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    email        text NOT NULL,
    remote_addr  text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX login_failures_email_idx ON login_failures (email, created_at);
CREATE INDEX login_failures_addr_idx ON login_failures (remote_addr, created_at);

CREATE TABLE projects (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    name         text NOT NULL CHECK (char_length(btrim(name)) BETWEEN 1 AND 100),
    created_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id),
    UNIQUE (workspace_id, name)
);

-- OAuth clients: dynamically registered ones (client_id random) and client ID
-- metadata documents (client_id is the https URL of the document).
CREATE TABLE oauth_clients (
    client_id                  text PRIMARY KEY CHECK (char_length(client_id) BETWEEN 1 AND 2048),
    client_secret_hash         bytea,
    client_name                text NOT NULL DEFAULT '' CHECK (char_length(client_name) <= 200),
    redirect_uris              text[] NOT NULL CHECK (cardinality(redirect_uris) BETWEEN 1 AND 20),
    token_endpoint_auth_method text NOT NULL CHECK (token_endpoint_auth_method IN ('none', 'client_secret_basic', 'client_secret_post')),
    is_metadata_document       boolean NOT NULL DEFAULT false,
    metadata                   jsonb NOT NULL DEFAULT '{}',
    created_at                 timestamptz NOT NULL DEFAULT now(),
    fetched_at                 timestamptz,
    CHECK ((token_endpoint_auth_method = 'none') = (client_secret_hash IS NULL))
);

-- A connection is one grant: an MCP client authorized by an owner. Every tool
-- call acts as a connection. client_id is NULL for a token minted without OAuth.
CREATE TABLE connections (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    owner_id     bigint NOT NULL,
    client_id    text REFERENCES oauth_clients (client_id) ON DELETE SET NULL,
    client_name  text NOT NULL CHECK (char_length(client_name) BETWEEN 1 AND 200),
    scopes       text[] NOT NULL CHECK (cardinality(scopes) >= 1 AND scopes <@ ARRAY['osfoundry:read', 'osfoundry:write']),
    -- The stable mail address of this connection's agent, set once and never changed.
    sender_slug  text CHECK (sender_slug ~ '^ext-[a-z0-9][a-z0-9-]{1,60}$'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz,
    revoked_at   timestamptz,
    UNIQUE (workspace_id, id),
    UNIQUE (workspace_id, sender_slug),
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);

CREATE TABLE oauth_codes (
    code_hash             bytea PRIMARY KEY CHECK (octet_length(code_hash) = 32),
    connection_id         bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    client_id             text NOT NULL REFERENCES oauth_clients (client_id) ON DELETE CASCADE,
    redirect_uri          text NOT NULL,
    code_challenge        text NOT NULL CHECK (code_challenge ~ '^[A-Za-z0-9_-]{43}$'),
    resource              text NOT NULL,
    scopes                text[] NOT NULL CHECK (scopes <@ ARRAY['osfoundry:read', 'osfoundry:write']),
    created_at            timestamptz NOT NULL DEFAULT now(),
    expires_at            timestamptz NOT NULL,
    used_at               timestamptz
);

CREATE TABLE access_tokens (
    token_hash    bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    connection_id bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    resource      text NOT NULL,
    scopes        text[] NOT NULL CHECK (cardinality(scopes) >= 1 AND scopes <@ ARRAY['osfoundry:read', 'osfoundry:write']),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL
);
CREATE INDEX access_tokens_connection_idx ON access_tokens (connection_id);

CREATE TABLE refresh_tokens (
    token_hash       bytea PRIMARY KEY CHECK (octet_length(token_hash) = 32),
    connection_id    bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    resource         text NOT NULL,
    scopes           text[] NOT NULL CHECK (cardinality(scopes) >= 1 AND scopes <@ ARRAY['osfoundry:read', 'osfoundry:write']),
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    -- Set when this token was exchanged; it keeps answering with the same new
    -- pair until rotated_at + grace, after which presenting it revokes the grant.
    rotated_at       timestamptz,
    replaced_by_hash bytea
);
CREATE INDEX refresh_tokens_connection_idx ON refresh_tokens (connection_id);

-- One profile per connection, claimed by the agent.
CREATE TABLE agent_profiles (
    connection_id bigint PRIMARY KEY,
    workspace_id  bigint NOT NULL,
    handle        text NOT NULL CHECK (handle ~ '^[a-z0-9][a-z0-9-]{1,30}$'),
    display_name  text NOT NULL CHECK (char_length(display_name) BETWEEN 1 AND 80),
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, handle),
    FOREIGN KEY (workspace_id, connection_id) REFERENCES connections (workspace_id, id) ON DELETE CASCADE
);

-- Self-reported status: one row per profile, overwritten by each set_status.
CREATE TABLE statuses (
    connection_id bigint PRIMARY KEY REFERENCES agent_profiles (connection_id) ON DELETE CASCADE,
    repo          text CHECK (char_length(repo) <= 300),
    branch        text CHECK (char_length(branch) <= 200),
    task          text CHECK (char_length(task) <= 280),
    updated_at    timestamptz NOT NULL DEFAULT now()
);

-- Connections seated in projects by an owner. Status visibility is "shares a project".
CREATE TABLE project_seats (
    workspace_id  bigint NOT NULL,
    project_id    bigint NOT NULL,
    connection_id bigint NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (project_id, connection_id),
    FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, connection_id) REFERENCES connections (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX project_seats_connection_idx ON project_seats (connection_id);

-- Work sessions (agent, team or loop), addressed by agents as (session_type, session_id).
CREATE TABLE sessions (
    id             bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id   bigint NOT NULL,
    project_id     bigint NOT NULL,
    session_type   text NOT NULL CHECK (session_type IN ('agent_session', 'team_session', 'loop_session')),
    public_id      text NOT NULL CHECK (public_id ~ '^[A-Za-z0-9_-]{1,100}$'),
    title          text NOT NULL CHECK (char_length(btrim(title)) BETWEEN 1 AND 200),
    created_by     bigint,
    -- The last resource-event sequence handed out; bumped in the same
    -- transaction as the event insert, which keeps the sequence gap-free.
    last_event_seq bigint NOT NULL DEFAULT 0 CHECK (last_event_seq >= 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    updated_at     timestamptz NOT NULL DEFAULT now(),
    UNIQUE (workspace_id, id),
    UNIQUE (public_id),
    FOREIGN KEY (workspace_id, project_id) REFERENCES projects (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, created_by) REFERENCES owners (workspace_id, id) ON DELETE SET NULL (created_by)
);
CREATE INDEX sessions_project_idx ON sessions (project_id);

-- Connections invited to a session; only they may read its mail or post notes.
CREATE TABLE invitations (
    workspace_id  bigint NOT NULL,
    session_id    bigint NOT NULL,
    connection_id bigint NOT NULL,
    role          text NOT NULL CHECK (role IN ('contributor', 'runner')),
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, connection_id),
    FOREIGN KEY (workspace_id, session_id) REFERENCES sessions (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, connection_id) REFERENCES connections (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX invitations_connection_idx ON invitations (connection_id);

-- Team mail. id increases across the whole store.
CREATE TABLE notes (
    id                   bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id         bigint NOT NULL,
    session_id           bigint NOT NULL,
    sender_kind          text NOT NULL CHECK (sender_kind IN ('owner', 'agent')),
    sender_owner_id      bigint,
    sender_connection_id bigint,
    sender_slug          text NOT NULL CHECK (char_length(sender_slug) BETWEEN 1 AND 100),
    sender_name          text NOT NULL CHECK (char_length(sender_name) BETWEEN 1 AND 200),
    -- NULL means the whole session.
    recipient_slug       text CHECK (char_length(recipient_slug) BETWEEN 1 AND 100),
    message_type         text NOT NULL CHECK (message_type IN ('note', 'reply', 'analysis')),
    subject              text NOT NULL CHECK (char_length(subject) <= 200),
    body                 text NOT NULL CHECK (char_length(body) <= 10000),
    idempotency_key      text CHECK (char_length(idempotency_key) BETWEEN 1 AND 200),
    created_at           timestamptz NOT NULL DEFAULT now(),
    UNIQUE (sender_connection_id, idempotency_key),
    CHECK ((sender_kind = 'agent') = (sender_connection_id IS NOT NULL AND sender_owner_id IS NULL)),
    CHECK ((sender_kind = 'owner') = (sender_owner_id IS NOT NULL AND sender_connection_id IS NULL)),
    CHECK (sender_kind = 'agent' OR idempotency_key IS NULL),
    CHECK (sender_kind = 'owner' OR message_type <> 'analysis'),
    FOREIGN KEY (workspace_id, session_id) REFERENCES sessions (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, sender_owner_id) REFERENCES owners (workspace_id, id) ON DELETE SET NULL (sender_owner_id),
    FOREIGN KEY (workspace_id, sender_connection_id) REFERENCES connections (workspace_id, id)
);
CREATE INDEX notes_session_idx ON notes (session_id, id DESC);

-- How far each owner has read each session's mail (unread marks).
CREATE TABLE note_reads (
    owner_id          bigint NOT NULL REFERENCES owners (id) ON DELETE CASCADE,
    session_id        bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    last_read_note_id bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (owner_id, session_id)
);

-- Per-session append-only sequence of what happened, read forward by agents.
CREATE TABLE resource_events (
    session_id bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    sequence   bigint NOT NULL CHECK (sequence >= 1),
    kind       text NOT NULL CHECK (kind IN ('note_posted', 'participant_invited', 'participant_updated', 'participant_removed', 'session_updated')),
    note_id    bigint REFERENCES notes (id) ON DELETE SET NULL,
    payload    jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, sequence)
);

-- Teams (store/people.go, store/person_invites.go, store/audit.go): each
-- person of a workspace has a role, people are invited by a signed link and
-- removed without losing what they wrote, and an append-only audit log keeps
-- who decided what.

-- A role per person: admin (people, connections, webhooks, project
-- settings, and all a member does), member (writes notes, answers), viewer
-- (reads and exports). Everyone who existed before roles could do
-- everything, so they become admins.
ALTER TABLE owners
    ADD COLUMN role text NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'member', 'viewer')),
    ADD COLUMN removed_at timestamptz;
-- A removed person keeps their row (their notes, answers and audit rows
-- name them) but not their email, which can be invited again.
DROP INDEX owners_email_key;
CREATE UNIQUE INDEX owners_email_key ON owners (email) WHERE removed_at IS NULL;
CREATE INDEX owners_workspace_role_idx ON owners (workspace_id, role) WHERE removed_at IS NULL;

-- Invitations of people (not the session invitations of connections): a
-- link names the row by id with an HMAC under a server secret; it works
-- once (accepted_at), until expires_at, unless revoked. Nothing of the
-- person exists before they accept.
CREATE TABLE person_invites (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    email        text NOT NULL CHECK (email = lower(email) AND email ~ '^[^@\s]+@[^@\s]+$' AND char_length(email) <= 254),
    role         text NOT NULL CHECK (role IN ('admin', 'member', 'viewer')),
    invited_by   bigint,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    accepted_at  timestamptz,
    accepted_by  bigint,
    revoked_at   timestamptz,
    CHECK (accepted_at IS NULL OR revoked_at IS NULL),
    CHECK ((accepted_at IS NULL) = (accepted_by IS NULL)),
    FOREIGN KEY (workspace_id, invited_by) REFERENCES owners (workspace_id, id) ON DELETE SET NULL (invited_by),
    FOREIGN KEY (workspace_id, accepted_by) REFERENCES owners (workspace_id, id)
);
-- At most one open invitation per email in a workspace: a new one replaces it.
CREATE UNIQUE INDEX person_invites_open_key ON person_invites (workspace_id, email)
    WHERE accepted_at IS NULL AND revoked_at IS NULL;

-- The audit log: one row per action, written in the action's transaction.
-- Rows are never updated or deleted (the trigger refuses it, but for the
-- cascade of a deleted workspace or owner); kind is free
-- text checked by the store's list of kinds, so a new kind needs no
-- migration.
CREATE TABLE audit_log (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
    owner_id     bigint,
    owner_name   text NOT NULL CHECK (char_length(owner_name) <= 80),
    kind         text NOT NULL CHECK (kind ~ '^[a-z]+(\.[a-z_]+)+$' AND char_length(kind) <= 60),
    project_id   bigint,
    subject      text NOT NULL CHECK (char_length(subject) <= 300),
    detail       jsonb NOT NULL DEFAULT '{}',
    remote_addr  text NOT NULL CHECK (char_length(remote_addr) <= 100),
    user_agent   text NOT NULL CHECK (char_length(user_agent) <= 300),
    created_at   timestamptz NOT NULL DEFAULT now(),
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE SET NULL (owner_id)
);
CREATE INDEX audit_log_workspace_idx ON audit_log (workspace_id, id DESC);
CREATE INDEX audit_log_owner_idx ON audit_log (workspace_id, owner_id, id DESC);
CREATE INDEX audit_log_kind_idx ON audit_log (workspace_id, kind, id DESC);
CREATE INDEX audit_log_project_idx ON audit_log (workspace_id, project_id, id DESC) WHERE project_id IS NOT NULL;

CREATE FUNCTION audit_log_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    -- A cascade from a deleted workspace or owner runs inside a trigger.
    IF pg_trigger_depth() > 1 THEN
        RETURN CASE TG_OP WHEN 'DELETE' THEN OLD ELSE NEW END;
    END IF;
    RAISE EXCEPTION 'the audit log is append-only';
END $$;
CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_append_only();

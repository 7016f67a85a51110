-- Web Push (store/push.go): the browsers each owner subscribed on Account,
-- what the owner wants pushed, and an outbox of pushes, one row per
-- (device, note, kind), sent by the push sender of any replica, which claims
-- due rows with FOR UPDATE SKIP LOCKED under a lease, as the mail sender does.

-- One browser's push subscription (the PushSubscription the browser gave):
-- its push service endpoint and the keys its messages are encrypted to
-- (RFC 8291: p256dh, the 65-byte uncompressed P-256 point; auth, 16 bytes).
-- An endpoint belongs to one owner: subscribing it again (another owner
-- signed in on the same browser) moves it.
CREATE TABLE push_subscriptions (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id  bigint NOT NULL,
    owner_id      bigint NOT NULL,
    endpoint      text NOT NULL UNIQUE CHECK (char_length(endpoint) BETWEEN 1 AND 2000),
    p256dh        bytea NOT NULL CHECK (octet_length(p256dh) = 65),
    auth          bytea NOT NULL CHECK (octet_length(auth) = 16),
    name          text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 80),
    user_agent    text NOT NULL DEFAULT '' CHECK (char_length(user_agent) <= 500),
    created_at    timestamptz NOT NULL DEFAULT now(),
    last_push_at  timestamptz,
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX push_subscriptions_owner_idx ON push_subscriptions (owner_id);
CREATE INDEX push_subscriptions_workspace_idx ON push_subscriptions (workspace_id);

-- What is pushed to an owner; an owner without a row has the defaults
-- (questions on, replies to them off).
CREATE TABLE owner_push_settings (
    owner_id      bigint PRIMARY KEY,
    workspace_id  bigint NOT NULL,
    questions     boolean NOT NULL DEFAULT true,
    replies       boolean NOT NULL DEFAULT false,
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);

-- The push outbox. kind says what the push is about (a question, a reply to
-- the owner; approvals add theirs); the payload is composed when the row is
-- claimed, from the note as it is then. UNIQUE: each device gets each note's
-- push of a kind once, whoever queues it and however often.
CREATE TABLE push_outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    subscription_id bigint NOT NULL REFERENCES push_subscriptions (id) ON DELETE CASCADE,
    workspace_id    bigint NOT NULL,
    owner_id        bigint NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('question', 'reply')),
    note_id         bigint NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    -- high for what blocks an agent (RFC 8030 Urgency).
    urgency         text NOT NULL DEFAULT 'normal' CHECK (urgency IN ('normal', 'high')),
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed', 'skipped')),
    attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    claimed_until   timestamptz,
    last_error      text CHECK (char_length(last_error) <= 300),
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    CHECK ((state = 'pending') = (finished_at IS NULL)),
    UNIQUE (subscription_id, note_id, kind),
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX push_outbox_pending_idx ON push_outbox (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX push_outbox_finished_idx ON push_outbox (finished_at) WHERE state <> 'pending';
CREATE INDEX push_outbox_note_idx ON push_outbox (note_id);

-- A question queues its push to every device of the workspace's owners who
-- want questions pushed, in the transaction that asks it: at once when it
-- blocks, at its notice (the project's delay) otherwise. Then the push
-- senders are woken.
CREATE FUNCTION push_question() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO push_outbox (subscription_id, workspace_id, owner_id, kind, note_id, urgency, next_attempt_at)
    SELECT s.id, s.workspace_id, s.owner_id, 'question', NEW.note_id,
        CASE WHEN NEW.urgency = 'blocking' THEN 'high' ELSE 'normal' END,
        CASE WHEN NEW.urgency = 'blocking' THEN now() ELSE coalesce(NEW.due_at, now()) END
    FROM push_subscriptions s
    LEFT JOIN owner_push_settings ps ON ps.owner_id = s.owner_id
    WHERE s.workspace_id = NEW.workspace_id AND coalesce(ps.questions, true)
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        PERFORM pg_notify('osfoundry_push', '');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER questions_push AFTER INSERT ON questions FOR EACH ROW EXECUTE FUNCTION push_question();

-- A reply to an owner (from an agent or another owner) queues its push to
-- the owner's devices when the owner wants replies pushed, due after the
-- project's delay for questions that do not block.
CREATE FUNCTION push_reply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    to_owner bigint := substr(NEW.recipient_slug, 7)::bigint;
BEGIN
    IF NEW.sender_owner_id IS NOT DISTINCT FROM to_owner THEN
        RETURN NULL;
    END IF;
    INSERT INTO push_outbox (subscription_id, workspace_id, owner_id, kind, note_id, next_attempt_at)
    SELECT s.id, s.workspace_id, s.owner_id, 'reply', NEW.id, now() + make_interval(mins => p.question_normal_minutes)
    FROM push_subscriptions s
    JOIN owner_push_settings ps ON ps.owner_id = s.owner_id AND ps.replies
    JOIN sessions ss ON ss.id = NEW.session_id
    JOIN projects p ON p.id = ss.project_id
    WHERE s.owner_id = to_owner AND s.workspace_id = NEW.workspace_id
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        PERFORM pg_notify('osfoundry_push', '');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER notes_push_reply AFTER INSERT ON notes FOR EACH ROW
    WHEN (NEW.message_type = 'reply' AND NEW.recipient_slug ~ '^owner-[0-9]{1,18}$')
    EXECUTE FUNCTION push_reply();

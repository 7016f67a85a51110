-- Email (store/mail_outbox.go): what each owner wants mailed, an outbox of
-- messages sent over SMTP by any replica, and the signed links in a
-- question's email that answer it after one confirming click.

-- What mails an owner; an owner without a row has the defaults (questions
-- on, the rest off). replies_through is the newest reply to the owner that
-- was considered for mail, digest_due_at when the next daily digest is due.
CREATE TABLE owner_mail_settings (
    owner_id        bigint PRIMARY KEY,
    workspace_id    bigint NOT NULL,
    questions       boolean NOT NULL DEFAULT true,
    replies         boolean NOT NULL DEFAULT false,
    digest          boolean NOT NULL DEFAULT false,
    replies_through bigint NOT NULL DEFAULT 0,
    digest_due_at   timestamptz,
    CHECK (digest = (digest_due_at IS NOT NULL)),
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX owner_mail_settings_digest_idx ON owner_mail_settings (digest_due_at) WHERE digest;
CREATE INDEX owner_mail_settings_replies_idx ON owner_mail_settings (owner_id) WHERE replies;

-- The mail outbox: one row per message to one owner, written with what it
-- says (the links in it are already minted). A sender claims due rows with
-- FOR UPDATE SKIP LOCKED under a lease, as the webhook outbox does.
CREATE TABLE mail_outbox (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id    bigint NOT NULL,
    owner_id        bigint NOT NULL,
    kind            text NOT NULL CHECK (kind IN ('question', 'reminder', 'reply', 'digest')),
    -- The question or reply it is about (NULL for a digest).
    note_id         bigint REFERENCES notes (id) ON DELETE CASCADE,
    subject         text NOT NULL CHECK (char_length(subject) BETWEEN 1 AND 300),
    text_body       text NOT NULL,
    html_body       text NOT NULL,
    state           text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'sent', 'failed')),
    attempts        integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    claimed_until   timestamptz,
    last_error      text CHECK (char_length(last_error) <= 300),
    created_at      timestamptz NOT NULL DEFAULT now(),
    finished_at     timestamptz,
    CHECK ((state = 'pending') = (finished_at IS NULL)),
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX mail_outbox_pending_idx ON mail_outbox (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX mail_outbox_finished_idx ON mail_outbox (finished_at) WHERE state <> 'pending';

-- A link in a question's email: one per option, and one for a free-text
-- answer (option_index NULL). Its token carries the id and an HMAC of the
-- row; it answers once (used_at), within 24 hours, and only as its owner.
CREATE TABLE answer_links (
    id               bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id     bigint NOT NULL,
    owner_id         bigint NOT NULL,
    question_id      bigint NOT NULL REFERENCES questions (note_id) ON DELETE CASCADE,
    option_index     integer CHECK (option_index BETWEEN 0 AND 4),
    created_at       timestamptz NOT NULL DEFAULT now(),
    expires_at       timestamptz NOT NULL,
    used_at          timestamptz,
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX answer_links_question_idx ON answer_links (question_id);

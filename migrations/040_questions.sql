-- Decisions (store/questions.go): an agent asks the session's owners a
-- question (ask_owner), the first owner to answer decides, and timers reach
-- the owners who are away (webhooks, email) and end a question nobody
-- answered as expired.

-- A question is a note of its own type, from an agent only. The answer is an
-- owner's reply to it; the notice that it expired unanswered is a reply from
-- osFoundry itself, the one sender that is neither an owner nor an agent.
ALTER TABLE notes DROP CONSTRAINT notes_message_type_check;
ALTER TABLE notes ADD CONSTRAINT notes_message_type_check
    CHECK (message_type IN ('note', 'reply', 'analysis', 'question'));
ALTER TABLE notes ADD CONSTRAINT notes_question_from_agent_check
    CHECK (message_type <> 'question' OR sender_kind = 'agent');
ALTER TABLE notes DROP CONSTRAINT notes_sender_kind_check;
ALTER TABLE notes ADD CONSTRAINT notes_sender_kind_check
    CHECK (sender_kind IN ('owner', 'agent', 'system'));
ALTER TABLE notes ADD CONSTRAINT notes_system_reply_check
    CHECK (sender_kind <> 'system' OR (message_type = 'reply' AND sender_owner_id IS NULL AND sender_connection_id IS NULL));

ALTER TABLE resource_events DROP CONSTRAINT resource_events_kind_check;
ALTER TABLE resource_events ADD CONSTRAINT resource_events_kind_check
    CHECK (kind IN ('note_posted', 'participant_invited', 'participant_updated', 'participant_removed', 'session_updated',
        'question_answered', 'question_expired'));

-- How long a project's questions wait before the owners are reached off the
-- page, by urgency, and when an unanswered one expires.
ALTER TABLE projects
    ADD COLUMN question_blocking_minutes integer NOT NULL DEFAULT 2 CHECK (question_blocking_minutes BETWEEN 0 AND 60),
    ADD COLUMN question_normal_minutes integer NOT NULL DEFAULT 15 CHECK (question_normal_minutes BETWEEN 0 AND 60),
    ADD COLUMN question_expiry_hours integer NOT NULL DEFAULT 24 CHECK (question_expiry_hours BETWEEN 1 AND 168);

-- One row per question note. state moves once, from open to answered (the
-- first owner's answer, one conditional UPDATE) or expired (its timer).
-- timer and due_at are what happens next to an open question and when (the
-- database's clock): notice (webhooks and email), reminder (once more), then
-- expiry; done when nothing is left. Any replica's timer runner claims a due
-- row with FOR UPDATE SKIP LOCKED and does its work in that transaction.
CREATE TABLE questions (
    note_id           bigint PRIMARY KEY,
    workspace_id      bigint NOT NULL,
    session_id        bigint NOT NULL,
    connection_id     bigint NOT NULL,
    options           text[] NOT NULL DEFAULT '{}' CHECK (cardinality(options) <= 5),
    urgency           text NOT NULL CHECK (urgency IN ('normal', 'blocking')),
    state             text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'answered', 'expired')),
    answer            text CHECK (char_length(answer) BETWEEN 1 AND 2000),
    answered_by       bigint,
    answered_by_name  text CHECK (char_length(answered_by_name) BETWEEN 1 AND 80),
    closed_at         timestamptz,
    -- The note that closed it: the answer, or the expiry notice.
    closing_note_id   bigint,
    timer             text NOT NULL DEFAULT 'notice' CHECK (timer IN ('notice', 'reminder', 'expiry', 'done')),
    due_at            timestamptz,
    expires_at        timestamptz NOT NULL,
    created_at        timestamptz NOT NULL DEFAULT now(),
    CHECK ((state = 'open') = (closed_at IS NULL)),
    CHECK ((state = 'answered') = (answer IS NOT NULL AND answered_by_name IS NOT NULL)),
    CHECK ((timer = 'done') = (due_at IS NULL)),
    CHECK (state = 'open' OR timer = 'done'),
    FOREIGN KEY (session_id, note_id) REFERENCES notes (session_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, session_id) REFERENCES sessions (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, connection_id) REFERENCES connections (workspace_id, id) ON DELETE CASCADE,
    FOREIGN KEY (workspace_id, answered_by) REFERENCES owners (workspace_id, id) ON DELETE SET NULL (answered_by),
    FOREIGN KEY (session_id, closing_note_id) REFERENCES notes (session_id, id) ON DELETE SET NULL (closing_note_id)
);
-- The timer runners' claim: the due rows, soonest first.
CREATE INDEX questions_due_idx ON questions (due_at) WHERE timer <> 'done';
-- The inbox's questions waiting, and the session page's.
CREATE INDEX questions_open_idx ON questions (workspace_id, note_id) WHERE state = 'open';

-- A question's webhook deliveries go through the outbox like a note's, as a
-- question event (the notice) or a reminder, queued by its timer rather
-- than with the note.
ALTER TABLE webhook_deliveries ADD COLUMN event text NOT NULL DEFAULT 'note'
    CHECK (event IN ('note', 'question', 'reminder'));

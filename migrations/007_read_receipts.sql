-- Agents hear back (SPEC §9): read receipts, and how far each invited
-- connection has been shown the mail addressed to it, which the unread hint of
-- every tool result counts from.

-- The first time read_session_mail returned a note to a connection that did
-- not write it. One row per (note, connection), whoever reads first on
-- whichever replica; kept when the connection is revoked.
CREATE TABLE note_receipts (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    note_id       bigint NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    connection_id bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    read_at       timestamptz NOT NULL DEFAULT now(),
    UNIQUE (note_id, connection_id)
);
CREATE INDEX note_receipts_connection_idx ON note_receipts (connection_id);

-- Per invitation: every note of the session addressed to the connection with
-- an id up to read_through has a receipt. The unread count looks only above
-- it, so a connection that keeps up costs a few index entries per call. Gone
-- with the invitation (the receipts stay, so a note once read stays read).
CREATE TABLE agent_mail_reads (
    session_id    bigint NOT NULL,
    connection_id bigint NOT NULL,
    read_through  bigint NOT NULL CHECK (read_through >= 0),
    PRIMARY KEY (session_id, connection_id),
    FOREIGN KEY (session_id, connection_id) REFERENCES invitations (session_id, connection_id) ON DELETE CASCADE
);

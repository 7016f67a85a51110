-- Agents hear back (docs/mcp.md, "Mail for an agent"): read receipts, and how far each connection has
-- been shown each session's mail, which the unread hint of every tool result
-- counts from.

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

-- Per connection and session: the newest note read_session_mail has returned
-- to the connection there. Its unread mail in the session is what is
-- addressed to it above this, so a connection that keeps up costs one index
-- probe per session it is invited to. Kept when the invitation ends (a note
-- once read stays read); it goes with the session or the connection.
CREATE TABLE agent_mail_reads (
    session_id    bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    connection_id bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    read_through  bigint NOT NULL CHECK (read_through >= 0),
    PRIMARY KEY (session_id, connection_id)
);
CREATE INDEX agent_mail_reads_connection_idx ON agent_mail_reads (connection_id);

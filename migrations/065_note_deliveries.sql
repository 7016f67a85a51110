-- Agents hear it at once (docs/claude-code.md, "The relay"): a note that
-- osFoundry put into an agent's context (a hook or a channel, through the
-- bridge's relay) is delivered for that agent, a receipt state before read.
-- One row per (note, connection), the first delivery on whichever replica.
-- Its id comes from the read receipts' sequence, so that one cursor ("a
-- receipt or delivery with an id above N") tells an owner's page what
-- changed in either, and a read that follows a delivery takes a newer id.
CREATE TABLE note_deliveries (
    id            bigint PRIMARY KEY DEFAULT nextval('note_receipts_id_seq'),
    note_id       bigint NOT NULL REFERENCES notes (id) ON DELETE CASCADE,
    connection_id bigint NOT NULL REFERENCES connections (id) ON DELETE CASCADE,
    session_id    bigint NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
    owner_note    boolean NOT NULL,
    delivered_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (note_id, connection_id)
);
CREATE INDEX note_deliveries_connection_idx ON note_deliveries (connection_id);
CREATE INDEX note_deliveries_owner_notes_idx ON note_deliveries (session_id, id) WHERE owner_note;

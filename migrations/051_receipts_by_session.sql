-- A receipt carries its note's session and whether that note is an owner's,
-- so that a session's receipts on owners' notes (what Team mail shows and
-- polls for: its newest one, those after a cursor) are a range of one index
-- instead of a join through every owner's note of the session.
ALTER TABLE note_receipts ADD COLUMN session_id bigint, ADD COLUMN owner_note boolean NOT NULL DEFAULT false;
UPDATE note_receipts r SET session_id = n.session_id, owner_note = (n.sender_kind = 'owner')
    FROM notes n WHERE n.id = r.note_id;
ALTER TABLE note_receipts ALTER COLUMN session_id SET NOT NULL,
    ADD FOREIGN KEY (session_id) REFERENCES sessions (id) ON DELETE CASCADE;
CREATE INDEX note_receipts_owner_notes_idx ON note_receipts (session_id, id) WHERE owner_note;

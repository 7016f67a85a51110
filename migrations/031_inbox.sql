-- The owner's inbox (store/inbox.go): the notes of a workspace addressed to
-- owners, newest first. The predicate is store.forOwners, written the same:
-- agents' notes to the whole session, replies to an owner's slug, questions;
-- never analysis.
CREATE INDEX notes_inbox_idx ON notes (workspace_id, id)
    WHERE message_type <> 'analysis' AND (message_type = 'question' OR recipient_slug LIKE 'owner-%'
        OR (sender_kind = 'agent' AND recipient_slug IS NULL));

-- An owner's unread counts (store/owner_unread.go) read the newest notes of
-- a session above the owner's read mark, at most 100, and test who wrote
-- each and whether it is for the inbox: with those columns in the index the
-- count is index-only, a few blocks per session however large its backlog,
-- instead of one heap block per note.
CREATE INDEX notes_unread_idx ON notes (session_id, id)
    INCLUDE (sender_owner_id, sender_kind, message_type, recipient_slug);

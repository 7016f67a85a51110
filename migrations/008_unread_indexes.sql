-- The unread hint counts, per session a connection is invited to, the mail
-- addressed to it above its read mark (store/unread.go): owners' notes to the
-- whole session and replies to a sender slug. This partial index holds exactly
-- the notes that can be addressed to an agent, with what the count reads of
-- them, so that counting reads only such mail, index-only, and never the
-- agents' notes to the whole session, which are most of a session's mail: a
-- connection that keeps up costs one empty index probe per invitation.
CREATE INDEX notes_addressed_idx ON notes (session_id, id) INCLUDE (sender_kind, recipient_slug, sender_connection_id)
    WHERE message_type <> 'analysis' AND (recipient_slug IS NOT NULL OR sender_kind = 'owner');

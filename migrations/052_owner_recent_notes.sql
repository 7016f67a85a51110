-- An owner's note post checks for the same note from the same owner in the
-- last seconds (a double submit) while it holds the session's lock: a range
-- of this index (owners' notes only, a tenth of the mail) by session, owner
-- and time, instead of a walk through the session's notes filtered on
-- created_at.
CREATE INDEX notes_owner_recent_idx ON notes (session_id, sender_owner_id, created_at) WHERE sender_kind = 'owner';

-- Threads: a note may answer another note of its session (in_reply_to), set
-- by the web app's Reply and by reply_to_sender.

-- A reply's parent is a note of the same session: the foreign key names the
-- pair, so notes_session_idx becomes unique (id alone already is), and keeps
-- its name and order for the queries that read a session's mail by it.
CREATE UNIQUE INDEX notes_session_id_key ON notes (session_id, id DESC);
DROP INDEX notes_session_idx;
ALTER INDEX notes_session_id_key RENAME TO notes_session_idx;

ALTER TABLE notes ADD COLUMN in_reply_to bigint;
ALTER TABLE notes ADD CONSTRAINT notes_in_reply_to_fkey
    FOREIGN KEY (session_id, in_reply_to) REFERENCES notes (session_id, id) ON DELETE SET NULL (in_reply_to);

-- A thread is walked down from its note: the replies of a note. Only replies
-- are in it, so notes that answer nothing cost it nothing.
CREATE INDEX notes_replies_idx ON notes (in_reply_to) WHERE in_reply_to IS NOT NULL;

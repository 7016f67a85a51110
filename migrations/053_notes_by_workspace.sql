-- A search walks its workspace's notes newest first (store/search.go): the
-- newest 10,000, then on when the words are common. Without this index the
-- walk read every workspace's notes by id and kept the owner's, so on a
-- server of many workspaces a search read many times the notes it needed.
CREATE INDEX notes_workspace_idx ON notes (workspace_id, id DESC);

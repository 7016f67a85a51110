-- Search reads the owner's workspace first (store/search.go, SPEC §20):
-- the words' GIN index holds the workspace too (btree_gin), so a search
-- reads the index entries of its own workspace's notes only, and another
-- workspace's words never change what it costs. It replaces the index of
-- the words alone, which every search read across all workspaces.
CREATE EXTENSION IF NOT EXISTS btree_gin;
CREATE INDEX notes_search_workspace_idx ON notes USING gin (workspace_id, search);
DROP INDEX notes_search_idx;

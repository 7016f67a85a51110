-- Search finds word forms: beside the 'simple' vector of migration 032
-- (orders_total, v2.3.1 and handles as written), the 'english' one of the
-- subject and body (rounding, rounded and round all stem to 'round'), in the
-- same column, so one GIN index answers both queries (store/search.go ORs
-- them). Each part is still its own tsvector: a phrase never spans two.
DROP INDEX IF EXISTS notes_search_idx;
ALTER TABLE notes DROP COLUMN search;
ALTER TABLE notes ADD COLUMN search tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', subject)
    || to_tsvector('simple', body)
    || to_tsvector('simple', sender_name || ' ' || sender_slug || ' ' || regexp_replace(sender_slug, '^ext-', ''))
    || to_tsvector('english', subject)
    || to_tsvector('english', body)
) STORED;
-- Dropping the column dropped the index of 062 with it: again, workspace
-- first (btree_gin), so a search reads its own workspace's entries only.
CREATE INDEX notes_search_workspace_idx ON notes USING gin (workspace_id, search);

-- note_plain is a body as search snippets show it: the Markdown syntax
-- taken out (fences, table rules and pipes, heading, quote, list and task
-- markers, emphasis, link and image targets), lines run together. Only the
-- page's results are ever passed through it.
CREATE FUNCTION note_plain(body text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT btrim(regexp_replace(
        replace(replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(regexp_replace(body,
            '^[ \t]*(```|~~~)[^\n]*$', '', 'gn'),
            '^[ \t]*\|?[ \t]*:?-{2,}:?[ \t]*(\|[ \t]*:?-{2,}:?[ \t]*)*\|?[ \t]*$', '', 'gn'),
            '^[ \t]{0,3}(#{1,6}[ \t]+|>[ \t]?)', '', 'gn'),
            '^[ \t]*([-*+]|[0-9]{1,9}[.)])[ \t]+(\[[ xX]\][ \t]+)?', '', 'gn'),
            '!?\[([^]\n]*)\]\([^)\n]*\)', '\1', 'g'),
            '\*+|~~|`+', '', 'g'),
            '[ \t]*\|[ \t]*', ' ', 'g'),
        E'\x01', ''), E'\x02', ''),
        '\s+', ' ', 'g'))
$$;

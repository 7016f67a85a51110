-- Full-text search over notes (store/search.go): subject, body and sender
-- (name, slug, and the handle inside an agent's slug), with the 'simple'
-- configuration: no stemming and no stop words, so that orders_total,
-- v2.3.1 and a handle match as written. Each part is its own tsvector, so a
-- phrase never spans two of them.
ALTER TABLE notes ADD COLUMN search tsvector GENERATED ALWAYS AS (
    to_tsvector('simple', subject)
    || to_tsvector('simple', body)
    || to_tsvector('simple', sender_name || ' ' || sender_slug || ' ' || regexp_replace(sender_slug, '^ext-', ''))
) STORED;
CREATE INDEX notes_search_idx ON notes USING gin (search);

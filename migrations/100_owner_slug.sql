-- An owner's sender slug is owner-<id>: owner_slug builds it, owner_slug_id
-- reads its id back (NULL for any other slug) and is_owner_slug tests it.
-- store.OwnerSlug and store.ParseOwnerSlug are the same rule in Go.
CREATE FUNCTION owner_slug(owner_id bigint) RETURNS text
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN 'owner-' || owner_id;

CREATE FUNCTION owner_slug_id(slug text) RETURNS bigint
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN CASE WHEN slug ~ '^owner-[1-9][0-9]{0,17}$' THEN substr(slug, 7)::bigint END;

CREATE FUNCTION is_owner_slug(slug text) RETURNS boolean
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN owner_slug_id(slug) IS NOT NULL;

-- The inbox's predicate, as store.forOwners writes it.
DROP INDEX notes_inbox_idx;
CREATE INDEX notes_inbox_idx ON notes (workspace_id, id)
    WHERE message_type <> 'analysis' AND (message_type = 'question' OR is_owner_slug(recipient_slug)
        OR (sender_kind = 'agent' AND recipient_slug IS NULL));

CREATE OR REPLACE FUNCTION push_reply() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    to_owner bigint := owner_slug_id(NEW.recipient_slug);
BEGIN
    IF NEW.sender_owner_id IS NOT DISTINCT FROM to_owner THEN
        RETURN NULL;
    END IF;
    INSERT INTO push_outbox (subscription_id, workspace_id, owner_id, kind, note_id, next_attempt_at)
    SELECT s.id, s.workspace_id, s.owner_id, 'reply', NEW.id, now() + make_interval(mins => p.question_normal_minutes)
    FROM push_subscriptions s
    JOIN owner_push_settings ps ON ps.owner_id = s.owner_id AND ps.replies
    JOIN sessions ss ON ss.id = NEW.session_id
    JOIN projects p ON p.id = ss.project_id
    WHERE s.owner_id = to_owner AND s.workspace_id = NEW.workspace_id
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        PERFORM pg_notify('osfoundry_push', '');
    END IF;
    RETURN NULL;
END $$;
DROP TRIGGER notes_push_reply ON notes;
CREATE TRIGGER notes_push_reply AFTER INSERT ON notes FOR EACH ROW
    WHEN (NEW.message_type = 'reply' AND is_owner_slug(NEW.recipient_slug))
    EXECUTE FUNCTION push_reply();

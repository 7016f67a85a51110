-- A question answered or expired replaces its notification on each device
-- its push reached: a push of kind closed, with the same tag, saying who
-- answered what (or that it expired), without the options.
ALTER TABLE push_outbox DROP CONSTRAINT push_outbox_kind_check;
ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_kind_check CHECK (kind IN ('question', 'reply', 'closed'));

CREATE FUNCTION push_question_closed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO push_outbox (subscription_id, workspace_id, owner_id, kind, note_id)
    SELECT p.subscription_id, p.workspace_id, p.owner_id, 'closed', p.note_id
    FROM push_outbox p
    WHERE p.note_id = NEW.note_id AND p.kind = 'question' AND p.state = 'sent'
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        PERFORM pg_notify('osfoundry_push', '');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER questions_push_closed AFTER UPDATE OF state ON questions FOR EACH ROW
    WHEN (OLD.state = 'open' AND NEW.state <> 'open')
    EXECUTE FUNCTION push_question_closed();

-- Approvals reach the owners' devices (SPEC §17, §18): a push of kind
-- approval per device of each owner who may decide (admins and members not
-- removed) and wants questions and approvals pushed, at once, when the
-- approval is asked; a push of kind closed replaces it, with the same tag,
-- once it is decided, expired or answered at the terminal. A push is about
-- a note or about an approval, never both.
ALTER TABLE push_outbox ALTER COLUMN note_id DROP NOT NULL;
ALTER TABLE push_outbox ADD COLUMN approval_id bigint REFERENCES approvals (id) ON DELETE CASCADE;
ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_about_check CHECK ((note_id IS NULL) <> (approval_id IS NULL));
ALTER TABLE push_outbox DROP CONSTRAINT push_outbox_kind_check;
ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_kind_check CHECK (kind IN ('question', 'reply', 'closed', 'approval'));
ALTER TABLE push_outbox ADD CONSTRAINT push_outbox_approval_check CHECK (kind <> 'approval' OR approval_id IS NOT NULL);
CREATE UNIQUE INDEX push_outbox_approval_key ON push_outbox (subscription_id, approval_id, kind) WHERE approval_id IS NOT NULL;
CREATE INDEX push_outbox_approval_idx ON push_outbox (approval_id) WHERE approval_id IS NOT NULL;

CREATE FUNCTION push_approval() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO push_outbox (subscription_id, workspace_id, owner_id, kind, approval_id, urgency)
    SELECT s.id, s.workspace_id, s.owner_id, 'approval', NEW.id, 'high'
    FROM push_subscriptions s
    JOIN owners o ON o.id = s.owner_id AND o.workspace_id = s.workspace_id
    LEFT JOIN owner_push_settings ps ON ps.owner_id = s.owner_id
    WHERE s.workspace_id = NEW.workspace_id AND o.role IN ('admin', 'member') AND o.removed_at IS NULL
        AND coalesce(ps.questions, true)
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        PERFORM pg_notify('osfoundry_push', '');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER approvals_push AFTER INSERT ON approvals FOR EACH ROW EXECUTE FUNCTION push_approval();

CREATE FUNCTION push_approval_closed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO push_outbox (subscription_id, workspace_id, owner_id, kind, approval_id)
    SELECT p.subscription_id, p.workspace_id, p.owner_id, 'closed', p.approval_id
    FROM push_outbox p
    WHERE p.approval_id = NEW.id AND p.kind = 'approval' AND p.state = 'sent'
    ON CONFLICT DO NOTHING;
    IF FOUND THEN
        PERFORM pg_notify('osfoundry_push', '');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER approvals_push_closed AFTER UPDATE OF state ON approvals FOR EACH ROW
    WHEN (OLD.state = 'pending' AND NEW.state <> 'pending')
    EXECUTE FUNCTION push_approval_closed();

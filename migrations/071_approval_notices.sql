-- An approval nobody decided within its project's delay reaches the owners
-- off the page (store/approval_timers.go): its webhook deliveries go
-- through the outbox as an approval event.
ALTER TABLE webhook_deliveries ADD COLUMN approval_id bigint REFERENCES approvals (id) ON DELETE CASCADE;
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_check;
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_event_check
    CHECK (event IN ('note', 'question', 'reminder', 'approval'));
ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_approval_check
    CHECK ((event = 'approval') = (approval_id IS NOT NULL));
CREATE INDEX webhook_deliveries_approval_idx ON webhook_deliveries (approval_id) WHERE approval_id IS NOT NULL;

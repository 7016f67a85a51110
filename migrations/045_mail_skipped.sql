-- A question's mail that was still in the outbox when the question was
-- answered or expired is not sent: it ends skipped.
ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_state_check;
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_state_check CHECK (state IN ('pending', 'sent', 'failed', 'skipped'));

-- Question mail folds (store/email_folding.go, SPEC §20): a question's
-- notice or reminder to an owner who has one not yet sent joins it, so a
-- burst of questions is one mail ("3 questions from @ada"), and an owner gets
-- at most one question mail per window. question_ids are the questions a
-- question mail asks, in the order they came.
ALTER TABLE mail_outbox ADD COLUMN question_ids bigint[];
UPDATE mail_outbox SET question_ids = ARRAY[note_id] WHERE kind IN ('question', 'reminder') AND note_id IS NOT NULL;
CREATE INDEX mail_outbox_owner_questions_idx ON mail_outbox (owner_id, id DESC) WHERE kind IN ('question', 'reminder');

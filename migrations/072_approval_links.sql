-- The links of an approval's email (store/approval_links.go): one allows,
-- one denies, each as the owner it was mailed to, after one confirming
-- click (a GET never decides), once, while the approval waits.
CREATE TABLE approval_links (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL,
    owner_id     bigint NOT NULL,
    approval_id  bigint NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
    verdict      text NOT NULL CHECK (verdict IN ('allow', 'deny')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX approval_links_approval_idx ON approval_links (approval_id);

ALTER TABLE mail_outbox DROP CONSTRAINT mail_outbox_kind_check;
ALTER TABLE mail_outbox ADD CONSTRAINT mail_outbox_kind_check CHECK (kind IN ('question', 'reminder', 'reply', 'digest', 'approval'));

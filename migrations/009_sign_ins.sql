-- Owners' sign-ins: the cookie of a signed-in browser names one of these
-- rows by a random token, of which only the SHA-256 is kept. Signing out
-- deletes the row, on every replica at once; a sign-in lasts at most 30 days
-- from created_at and ends after 7 days without a request (last_seen_at,
-- renewed at most every few minutes).
CREATE TABLE sign_ins (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    workspace_id bigint NOT NULL,
    owner_id     bigint NOT NULL,
    token_hash   bytea NOT NULL UNIQUE CHECK (octet_length(token_hash) = 32),
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_seen_at timestamptz NOT NULL DEFAULT now(),
    remote_addr  text NOT NULL CHECK (char_length(remote_addr) <= 100),
    user_agent   text NOT NULL CHECK (char_length(user_agent) <= 300),
    FOREIGN KEY (workspace_id, owner_id) REFERENCES owners (workspace_id, id) ON DELETE CASCADE
);
CREATE INDEX sign_ins_owner_idx ON sign_ins (owner_id, created_at);

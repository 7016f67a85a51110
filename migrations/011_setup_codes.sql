-- One-time setup codes: while no owner exists, each starting server makes
-- one, prints it and keeps only its SHA-256 here; creating the first owner
-- through the web requires one of them and deletes them all.
CREATE TABLE setup_codes (
    code_hash  bytea PRIMARY KEY CHECK (octet_length(code_hash) = 32),
    created_at timestamptz NOT NULL DEFAULT now()
);

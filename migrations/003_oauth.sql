-- Where each dynamically registered OAuth client came from, so registration can
-- be rate limited per address across replicas.
ALTER TABLE oauth_clients ADD COLUMN registered_from text;
CREATE INDEX oauth_clients_registered_from_idx ON oauth_clients (registered_from, created_at)
    WHERE registered_from IS NOT NULL;

-- Approval reuses an owner's live connection for the same client.
CREATE INDEX connections_owner_client_idx ON connections (owner_id, client_id)
    WHERE revoked_at IS NULL AND client_id IS NOT NULL;

-- OAuth clients that no owner ever approved are pruned a day after they were
-- stored (store.PruneUngrantedClients): a client is kept while a connection,
-- an authorization code or a refresh token names it. These indexes let the
-- prune find them, and let its deletes check the references quickly.
CREATE INDEX oauth_clients_created_idx ON oauth_clients (created_at);
CREATE INDEX connections_client_idx ON connections (client_id) WHERE client_id IS NOT NULL;
CREATE INDEX oauth_codes_client_idx ON oauth_codes (client_id);
CREATE INDEX refresh_tokens_client_idx ON refresh_tokens (client_id) WHERE client_id IS NOT NULL;

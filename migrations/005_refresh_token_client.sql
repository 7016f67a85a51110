-- The client a refresh token was issued to. A later registration of the same
-- client (same name and redirect URIs: some clients register again on every
-- sign-in) continues the owner's connection and becomes its client; a refresh
-- token keeps answering only the registration it was issued to. NULL (tokens
-- issued before this column) means the connection's client.
ALTER TABLE refresh_tokens ADD COLUMN client_id text REFERENCES oauth_clients (client_id) ON DELETE CASCADE;

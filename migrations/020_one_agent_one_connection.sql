-- One agent, one connection. A new authorization no longer continues an
-- owner's connection because its client has the same name: it continues one
-- only when the owner picks it on the consent page ("Sign in again as"), and
-- otherwise starts a new connection. refresh_tokens.client_id (005) keeps
-- one meaning: the registration a refresh token was issued to, the only
-- client that may refresh it.

-- A refresh token is superseded once a later authorization has continued its
-- connection (the agent signed in again). Revoking a superseded token
-- (RFC 7009) ends only the earlier sign-in's tokens; revoking a current one
-- ends the grant. Tokens of a registration the connection has since moved
-- away from are the superseded ones of before.
ALTER TABLE refresh_tokens ADD COLUMN superseded boolean NOT NULL DEFAULT false;
UPDATE refresh_tokens rt SET superseded = true
FROM connections c
WHERE c.id = rt.connection_id AND rt.client_id IS NOT NULL AND rt.client_id IS DISTINCT FROM c.client_id;

-- The consent page lists an owner's connections of the same client software
-- (the same client_id, or the same client name), revoked ones included.
DROP INDEX connections_owner_client_idx;
CREATE INDEX connections_owner_client_idx ON connections (owner_id, client_id) WHERE client_id IS NOT NULL;
CREATE INDEX connections_owner_name_idx ON connections (owner_id, client_name) WHERE client_id IS NOT NULL;

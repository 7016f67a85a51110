-- The throttle of password checks (sign-in, first-run setup, password
-- change), for every replica: one row per action and key, where the key is
-- an email and a client address, or the address alone (email ''). A check
-- reserves its try here before any password is hashed; the first free_tries
-- tries go at once, each later one waits longer (next_at), and a key that
-- has been quiet for an hour starts over.
CREATE TABLE attempts (
    action      text NOT NULL CHECK (action IN ('sign-in', 'setup', 'password')),
    email       text NOT NULL,
    remote_addr text NOT NULL,
    tries       integer NOT NULL CHECK (tries >= 0),
    free_tries  integer NOT NULL CHECK (free_tries > 0),
    next_at     timestamptz NOT NULL,
    last_at     timestamptz NOT NULL,
    PRIMARY KEY (action, email, remote_addr)
);
CREATE INDEX attempts_last_idx ON attempts (last_at);

-- Failures counted per email or per address, which let anyone lock an owner
-- out; the attempts above replace them.
DROP TABLE login_failures;

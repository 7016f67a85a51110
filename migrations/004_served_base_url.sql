-- The public base URL the server last started with, so that command-line tools
-- on the same database (osfoundry token create) bind tokens to the address
-- agents actually reach. One row; the last server to start wins.
CREATE TABLE served_base_url (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    base_url    text NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now()
);

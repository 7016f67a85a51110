-- Limits on what one agent writes (store/write_limits.go, SPEC §20).

-- Each connection's writes (notes, replies, questions) draw on a token
-- bucket: per_minute tokens a minute, at most burst held, both a setting of
-- the project the write goes to.
ALTER TABLE projects
    ADD COLUMN write_per_minute integer NOT NULL DEFAULT 60 CHECK (write_per_minute BETWEEN 1 AND 6000),
    ADD COLUMN write_burst integer NOT NULL DEFAULT 20 CHECK (write_burst BETWEEN 1 AND 1000);

-- A connection's bucket as its last write left it: tokens at refilled_at
-- (refilled since at per_minute a minute, up to burst), and whether that write was
-- granted. One row per connection, taken from in one statement.
CREATE TABLE write_buckets (
    connection_id bigint PRIMARY KEY REFERENCES connections (id) ON DELETE CASCADE,
    tokens        double precision NOT NULL,
    refilled_at   timestamptz NOT NULL,
    per_minute    integer NOT NULL,
    burst         integer NOT NULL,
    granted       boolean NOT NULL
);

-- At most 20 open questions per agent (store.MaxOpenQuestions): the count is
-- the connection's own, kept by the questions' triggers, and a question
-- that would be the 21st is refused by the row's update, which waits for
-- the asks running at once on any replica.
ALTER TABLE connections ADD COLUMN open_questions integer NOT NULL DEFAULT 0 CHECK (open_questions >= 0);
UPDATE connections c SET open_questions = q.n
FROM (SELECT connection_id, count(*) AS n FROM questions WHERE state = 'open' GROUP BY connection_id) q
WHERE q.connection_id = c.id;

CREATE FUNCTION questions_count_open() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE connections SET open_questions = open_questions + 1 WHERE id = NEW.connection_id AND open_questions < 20;
        IF NOT FOUND THEN
            RAISE EXCEPTION 'too many open questions' USING ERRCODE = 'check_violation', CONSTRAINT = 'questions_open_per_agent';
        END IF;
        RETURN NEW;
    END IF;
    UPDATE connections SET open_questions = greatest(open_questions - 1, 0) WHERE id = OLD.connection_id;
    RETURN NULL;
END $$;

CREATE TRIGGER questions_count_asked BEFORE INSERT ON questions
    FOR EACH ROW EXECUTE FUNCTION questions_count_open();
CREATE TRIGGER questions_count_closed AFTER UPDATE OF state ON questions
    FOR EACH ROW WHEN (OLD.state = 'open' AND NEW.state <> 'open') EXECUTE FUNCTION questions_count_open();
CREATE TRIGGER questions_count_deleted AFTER DELETE ON questions
    FOR EACH ROW WHEN (OLD.state = 'open') EXECUTE FUNCTION questions_count_open();

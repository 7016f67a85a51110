-- A tool call's check of its access token travels with the call's first
-- statement, in the same round trip (store/token_check.go): the check runs
-- first and, when the token no longer stands (unknown, expired, revoked, for
-- another resource) or lacks the tool's scope, raises this error, which ends
-- the round trip before the tool's statement runs. Its SQLSTATE says which:
-- OF401 (the token) or OF403 (the scope).
CREATE FUNCTION osfoundry_refuse_call(code text) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'osfoundry: call refused (%)', code USING ERRCODE = code;
END
$$;

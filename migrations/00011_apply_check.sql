-- A Change is applied in one round trip, as one implicit transaction (a
-- pipelined batch ending in a single Sync): the client cannot look at a
-- statement's row count and then roll back, so each guarded write checks
-- itself and fails the transaction when its condition does not hold. The
-- error names the guard (MESSAGE: key, create, update, fence, lease, run,
-- checkpoint) and the row it was about (DETAIL: a task or run id); pgstore
-- explains it after the rollback.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION agentd_check(ok boolean, what text, id text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF ok IS NOT TRUE THEN
        RAISE EXCEPTION USING ERRCODE = 'AG409', MESSAGE = what, DETAIL = id;
    END IF;
    RETURN true;
END
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION agentd_check(boolean, text, text);

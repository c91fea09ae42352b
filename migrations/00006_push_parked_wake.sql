-- Parked push configs (00005) cost the claim sweep nothing. Until now a
-- parked row kept claim_expires_at = '-infinity', first in the pending
-- index, so every claim round of every replica rechecked every waiting
-- task's version. Now a parked row sleeps at 'infinity' — past every
-- claim round's `claim_expires_at <= now`, at the far end of the index —
-- and an update of its task (which always bumps the task's version: it
-- resumed, was canceled, timed out) wakes it to '-infinity', claimable at
-- once. The claim query no longer looks at tasks.
--
-- Parking checks the task's version under a share lock on the task's row
-- (pgstore's savePushSQL): a task update either commits before the check
-- (the config is not put to sleep) or waits for the park to commit and
-- then wakes it here. No wake-up is lost.

-- +goose Up
-- +goose StatementBegin
CREATE FUNCTION push_configs_wake() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE push_configs SET claim_expires_at = '-infinity'
    WHERE tenant = NEW.tenant AND task_id = NEW.id AND NOT done AND claim_expires_at = 'infinity';
    RETURN NULL;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER tasks_wake_push_configs AFTER UPDATE ON tasks
    FOR EACH ROW WHEN (NEW.version <> OLD.version) EXECUTE FUNCTION push_configs_wake();

-- Configs parked before this migration sleep if their task has not moved.
UPDATE push_configs c SET claim_expires_at = 'infinity'
FROM tasks t
WHERE t.tenant = c.tenant AND t.id = c.task_id AND t.version = c.parked_version
    AND NOT c.done AND c.parked_version <> 0 AND c.claim_owner = '';

-- +goose Down
UPDATE push_configs SET claim_expires_at = '-infinity' WHERE claim_expires_at = 'infinity';
DROP TRIGGER tasks_wake_push_configs ON tasks;
DROP FUNCTION push_configs_wake();

-- Retention (pgstore.PruneFinished) finds finished runs by the time they
-- finished: a partial index over terminal tasks only, oldest first. Tasks
-- change state a few times per run, so the index costs little; the runs
-- head, written on every event flush, gets no new index.

-- +goose Up
CREATE INDEX tasks_finished ON tasks (updated_at, tenant, id)
    WHERE state IN ('completed', 'failed', 'canceled', 'rejected');

-- +goose Down
DROP INDEX tasks_finished;

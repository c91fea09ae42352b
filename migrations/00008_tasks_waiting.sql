-- The sweep of expired prompts and approvals lists the tasks waiting for
-- input across every tenant (ListTasksOfAllTenants), each round: this
-- index holds only waiting tasks, so a round reads a page of them rather
-- than scanning every task.

-- +goose Up
CREATE INDEX tasks_waiting ON tasks (agent_id, created_at DESC, id DESC)
    WHERE state IN ('input-required', 'auth-required');

-- +goose Down
DROP INDEX tasks_waiting;

-- Budgets per agent per period: each row counts the tokens an agent's runs
-- used in one period (its length in seconds, its start aligned to the Unix
-- epoch) in one tenant. Replicas charge the same row, so a budget holds
-- across the deployment and across restarts. Rows of past periods are kept
-- as a record of usage; they are small (one per agent and period).

-- +goose Up
CREATE TABLE agent_usage (
    tenant         text        NOT NULL,
    agent_id       text        NOT NULL,
    period_seconds bigint      NOT NULL,
    period_start   timestamptz NOT NULL,
    tokens         bigint      NOT NULL DEFAULT 0,
    updated_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, agent_id, period_seconds, period_start)
);

-- +goose Down
DROP TABLE agent_usage;

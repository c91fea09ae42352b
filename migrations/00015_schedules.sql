-- Cron schedules (store.Schedules): each row fires an ordinary run of its
-- agent at every tick of its expression. Replicas share the firing through
-- the row itself: a replica claims a due tick (claimed_by, claim_until: a
-- conditional update, one winner, like a lease), starts the tick's run,
-- then advances next_fire_at and frees the claim; a claim whose replica
-- died expires and another replica claims the same tick again.
-- metadata is jsonb (searched by containment); input json (kept as sent).

-- +goose Up
CREATE TABLE schedules (
    tenant       text        NOT NULL,
    id           text        NOT NULL,
    agent_id     text        NOT NULL,
    assistant_id text        NOT NULL DEFAULT '',
    context_id   text        NOT NULL,
    cron         text        NOT NULL,
    timezone     text        NOT NULL,
    input        json        NOT NULL,
    metadata     jsonb       NOT NULL,
    end_at       timestamptz,
    next_fire_at timestamptz,
    claimed_by   text        NOT NULL DEFAULT '',
    claim_until  timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
-- The schedulers' one question: which ticks are due, across tenants.
CREATE INDEX schedules_due ON schedules (next_fire_at) WHERE next_fire_at IS NOT NULL;
CREATE INDEX schedules_by_created ON schedules (tenant, created_at, id);

-- +goose Down
DROP TABLE schedules;

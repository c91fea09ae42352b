-- agentd schema, version 1. Every table but leases is keyed by tenant first:
-- every query of pgstore is scoped by the tenant of its context, and the key
-- makes a record of another tenant invisible rather than a collision.

-- +goose Up

-- Tasks (runs). Scalars the queries filter or sort on are columns; the
-- structured parts the store never looks into are json documents: json (not
-- jsonb) because no query reads inside them, and because jsonb refuses text
-- holding U+0000 (\u0000), which model messages, metadata and checkpoints
-- may carry — the store keeps whatever a client or a model produced.
CREATE TABLE tasks (
    tenant           text        NOT NULL,
    id               text        NOT NULL,
    context_id       text        NOT NULL,
    agent_id         text        NOT NULL,
    state            text        NOT NULL,
    status_message   json,
    error            json,
    artifacts        json,
    usage            json        NOT NULL,
    attempt          integer     NOT NULL,
    cancel_requested boolean     NOT NULL,
    metadata         json,
    version          bigint      NOT NULL,
    created_at       timestamptz NOT NULL,
    updated_at       timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
-- Access paths: a context's tasks newest first, an agent's tasks newest first
-- (A2A ListTasks is always scoped to one agent), and all tasks newest first
-- (ListTasks keyset-pages on (created_at, id) in each).
CREATE INDEX tasks_by_context ON tasks (tenant, context_id, created_at DESC, id DESC);
CREATE INDEX tasks_by_created ON tasks (tenant, created_at DESC, id DESC);
CREATE INDEX tasks_by_agent ON tasks (tenant, agent_id, created_at DESC, id DESC);

-- A context's transcript head: the last assigned position. Appends lock this
-- row, which serialises writers of one context and keeps positions dense.
CREATE TABLE contexts (
    tenant        text   NOT NULL,
    context_id    text   NOT NULL,
    last_position bigint NOT NULL,
    PRIMARY KEY (tenant, context_id)
);

-- Transcript entries. Access path: a context's transcript in position order
-- (the primary key), optionally only one task's messages.
CREATE TABLE messages (
    tenant     text   NOT NULL,
    context_id text   NOT NULL,
    position   bigint NOT NULL,
    task_id    text   NOT NULL,
    message    json   NOT NULL,
    PRIMARY KEY (tenant, context_id, position)
);
CREATE INDEX messages_by_task ON messages (tenant, context_id, task_id, position) WHERE task_id <> '';

-- Idempotency records: a client's messageId within a context names the task
-- it started. Access path: the key itself.
CREATE TABLE idempotency_keys (
    tenant     text        NOT NULL,
    context_id text        NOT NULL,
    message_id text        NOT NULL,
    task_id    text        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, context_id, message_id)
);

-- Per-run head: the event log's bounds and the checkpoint fence. Appending
-- events and saving checkpoints update this row conditionally, which locks
-- it for the transaction and makes dense seqs and attempt fencing atomic.
CREATE TABLE runs (
    tenant             text    NOT NULL,
    run_id             text    NOT NULL,
    last_seq           bigint  NOT NULL DEFAULT 0,
    pruned_through     bigint  NOT NULL DEFAULT 0,
    checkpoint_attempt integer NOT NULL DEFAULT 0,
    checkpoint_seq     bigint  NOT NULL DEFAULT 0,
    PRIMARY KEY (tenant, run_id)
);

-- Event frames: one row per batch of consecutive events of a run (one
-- Apply), never one row per event or token. events is a JSON array of
-- {"seq","type","time","data"}; json (not jsonb) keeps the runtime's bytes
-- exactly, so a replayed event is byte-identical to the live one. A frame
-- holds at most 256 events so a page's frames are one index range on seq_to.
-- Access path: a run's events after a seq (the primary key).
CREATE TABLE event_frames (
    tenant   text   NOT NULL,
    run_id   text   NOT NULL,
    seq_from bigint NOT NULL,
    seq_to   bigint NOT NULL,
    events   json   NOT NULL,
    PRIMARY KEY (tenant, run_id, seq_to),
    CHECK (seq_from >= 1 AND seq_from <= seq_to AND seq_to - seq_from < 256)
);

-- Checkpoint history per run, oldest first by seq (the primary key serves
-- both "newest" and "history").
CREATE TABLE checkpoints (
    tenant     text        NOT NULL,
    run_id     text        NOT NULL,
    seq        bigint      NOT NULL,
    attempt    integer     NOT NULL,
    checkpoint json        NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (tenant, run_id, seq)
);

-- Push-notification configs per task.
CREATE TABLE push_configs (
    tenant     text        NOT NULL,
    task_id    text        NOT NULL,
    id         text        NOT NULL,
    config     json        NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, task_id, id)
);

-- Leases on running runs. Leases are global, keyed by run id alone (run ids
-- are UUIDs): recovery scans every tenant's expired leases, and each lease
-- records its run's tenant so the recovering replica can read the run. A released lease
-- keeps its row (owner '') so the generation keeps growing and fences every
-- previous owner. Access path: expired leases, earliest first (a partial
-- index on held leases).
CREATE TABLE leases (
    run_id     text        NOT NULL PRIMARY KEY,
    tenant     text        NOT NULL,
    owner      text        NOT NULL,
    generation bigint      NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX leases_by_expiry ON leases (expires_at) WHERE owner <> '';

-- +goose Down
DROP TABLE leases;
DROP TABLE push_configs;
DROP TABLE checkpoints;
DROP TABLE event_frames;
DROP TABLE runs;
DROP TABLE idempotency_keys;
DROP TABLE messages;
DROP TABLE contexts;
DROP TABLE tasks;

-- The Agent Protocol's threads: a record per conversation a client created
-- by name, with its metadata. jsonb (not json, unlike the other documents)
-- because thread search filters on the metadata by containment.

-- +goose Up
CREATE TABLE threads (
    tenant     text        NOT NULL,
    id         text        NOT NULL,
    metadata   jsonb       NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX threads_by_created ON threads (tenant, created_at DESC, id DESC);

-- +goose Down
DROP TABLE threads;

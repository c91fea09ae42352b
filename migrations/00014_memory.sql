-- Long-term memory: items per tenant under a namespace (a path of labels)
-- and a key, kept across conversations. The text an item is searched by is
-- indexed for PostgreSQL's full-text search; its embedding (of unit length)
-- is kept as bytes (float32, little-endian), which every PostgreSQL stores
-- and sends without converting each element: pgstore ranks by it in the
-- server (its vector extension is not required, nor used).

-- +goose Up
CREATE TABLE memory_items (
    tenant     text        NOT NULL,
    namespace  text[]      NOT NULL,
    key        text        NOT NULL,
    value      jsonb       NOT NULL,
    text       text        NOT NULL DEFAULT '',
    tsv        tsvector    GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    embedding  bytea,
    ttl_ms     bigint,
    expires_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, namespace, key)
);
CREATE INDEX memory_items_by_updated ON memory_items (tenant, updated_at DESC);
CREATE INDEX memory_items_tsv ON memory_items USING gin (tsv);
-- A namespace prefix is found through its labels (namespace @> prefix), then
-- checked in place.
CREATE INDEX memory_items_namespace ON memory_items USING gin (namespace);
-- Puts sweep their tenant's expired items.
CREATE INDEX memory_items_expiry ON memory_items (tenant, expires_at) WHERE expires_at IS NOT NULL;

-- +goose Down
DROP TABLE memory_items;

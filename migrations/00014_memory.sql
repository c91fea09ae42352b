-- Long-term memory: items per tenant under a namespace (a path of labels)
-- and a key, kept across conversations. The text an item is searched by is
-- indexed for PostgreSQL's full-text search; its embedding (of unit length)
-- is a plain real[] so that every PostgreSQL can rank by it (memory_dot):
-- where the vector extension is installed, pgstore ranks with it instead,
-- casting the same column.

-- +goose Up
CREATE TABLE memory_items (
    tenant     text        NOT NULL,
    namespace  text[]      NOT NULL,
    key        text        NOT NULL,
    value      jsonb       NOT NULL,
    text       text        NOT NULL DEFAULT '',
    tsv        tsvector    GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    embedding  real[],
    ttl_ms     bigint,
    expires_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (tenant, namespace, key)
);
CREATE INDEX memory_items_by_updated ON memory_items (tenant, updated_at DESC);
CREATE INDEX memory_items_tsv ON memory_items USING gin (tsv);

-- memory_dot is the dot product of two vectors of the same length: their
-- cosine similarity when both have unit length.
-- +goose StatementBegin
CREATE FUNCTION memory_dot(a real[], b real[]) RETURNS double precision
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT sum(x::double precision * y) FROM unnest(a, b) AS t(x, y)
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION memory_dot(real[], real[]);
DROP TABLE memory_items;

-- How replicas reach one another: before a replica takes over a run whose
-- lease expired, it asks the lease's owner (at url) whether it still
-- executes the run — the database alone cannot tell a replica cut off from
-- it from a dead one. A replica records itself at start and every minute;
-- rows not seen for an hour are forgotten.

-- +goose Up
CREATE TABLE replicas (
    id      text PRIMARY KEY,
    url     text NOT NULL,
    seen_at timestamptz NOT NULL
);

-- +goose Down
DROP TABLE replicas;

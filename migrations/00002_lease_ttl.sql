-- Each lease records the TTL its owner renews it with: after the database
-- restarts, another replica may take an expired lease over only once the
-- server has been up for that lease's TTL, so that a live owner gets one
-- lease period to renew first (pgstore's claimLeaseSQL).

-- +goose Up
ALTER TABLE leases ADD COLUMN ttl_us bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE leases DROP COLUMN ttl_us;

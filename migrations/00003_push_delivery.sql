-- The delivery of each push config: the seq of the task's last event whose
-- update reached the webhook (delivery resumes after it), whether delivery
-- is over, and the replica that delivers it now. Claims work like leases:
-- they expire unless renewed, and their generation fences a previous
-- holder, so a killed replica's deliveries resume on another one.

-- +goose Up
ALTER TABLE push_configs
    ADD COLUMN delivered_seq    bigint      NOT NULL DEFAULT 0,
    ADD COLUMN done             boolean     NOT NULL DEFAULT false,
    ADD COLUMN claim_owner      text        NOT NULL DEFAULT '',
    ADD COLUMN claim_generation bigint      NOT NULL DEFAULT 0,
    ADD COLUMN claim_expires_at timestamptz NOT NULL DEFAULT '-infinity';

-- The claim sweep's access path: pending configs by claim expiry.
CREATE INDEX push_configs_pending ON push_configs (claim_expires_at) WHERE NOT done;

-- +goose Down
DROP INDEX push_configs_pending;
ALTER TABLE push_configs
    DROP COLUMN claim_expires_at,
    DROP COLUMN claim_generation,
    DROP COLUMN claim_owner,
    DROP COLUMN done,
    DROP COLUMN delivered_seq;

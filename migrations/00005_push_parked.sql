-- A push config whose task waits for input, every update delivered, is
-- parked: its delivery gives its claim up and records the task's version,
-- and the claim sweep takes it up again only once the task's version
-- moved (the task resumed, was canceled, …). A waiting task then costs no
-- replica a reader polling its log.

-- +goose Up
ALTER TABLE push_configs ADD COLUMN parked_version bigint NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE push_configs DROP COLUMN parked_version;

-- Signals any replica takes for a run another replica executes (pause,
-- feedback): recorded on the task, oldest first, for the owner to read in
-- its lease renewal round and to remove once it acted on them. json, not
-- jsonb, like every document of the schema (a feedback text may hold
-- U+0000); NULL when none is pending, which is nearly always.

-- +goose Up
ALTER TABLE tasks ADD COLUMN signals json;

-- +goose Down
ALTER TABLE tasks DROP COLUMN signals;

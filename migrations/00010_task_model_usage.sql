-- A run's token usage split by the model called, so that the run view can
-- price it (prices in the configuration): a json object of model name to
-- usage, like the usage column beside it; NULL for a run that called no
-- model, or that ended before this column existed.

-- +goose Up
ALTER TABLE tasks ADD COLUMN model_usage json;

-- +goose Down
ALTER TABLE tasks DROP COLUMN model_usage;

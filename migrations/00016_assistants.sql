-- Versioned assistants: a named configuration of a configured agent, per
-- tenant. assistants holds one row per assistant and which version is its
-- latest; assistant_versions holds every version, never changed once
-- written. jsonb for metadata, which search filters by containment.

-- +goose Up
CREATE TABLE assistants (
    tenant         text        NOT NULL,
    id             text        NOT NULL,
    agent_id       text        NOT NULL,
    latest_version integer     NOT NULL,
    newest_version integer     NOT NULL,
    created_at     timestamptz NOT NULL,
    updated_at     timestamptz NOT NULL,
    PRIMARY KEY (tenant, id)
);
CREATE INDEX assistants_by_created ON assistants (tenant, created_at DESC, id DESC);

CREATE TABLE assistant_versions (
    tenant      text        NOT NULL,
    id          text        NOT NULL,
    version     integer     NOT NULL,
    agent_id    text        NOT NULL,
    name        text        NOT NULL,
    description text        NOT NULL,
    context     jsonb       NOT NULL,
    config      jsonb       NOT NULL,
    metadata    jsonb       NOT NULL,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (tenant, id, version),
    FOREIGN KEY (tenant, id) REFERENCES assistants (tenant, id) ON DELETE CASCADE
);

-- +goose Down
DROP TABLE assistant_versions;
DROP TABLE assistants;

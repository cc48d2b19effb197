-- 020_catalog: the registry of published releases. A row exists iff its schema is published:
-- both are created in the same transaction by the publish step.

CREATE TABLE IF NOT EXISTS catalog.releases (
    release_name     text PRIMARY KEY,
    dataset          text NOT NULL,
    method           text NOT NULL,
    k                integer NOT NULL CHECK (k >= 2),
    k_counts         text NOT NULL CHECK (k_counts IN ('persons', 'trajectories')),
    privacy_model    text NOT NULL,
    window_start     timestamptz NOT NULL,
    window_end       timestamptz NOT NULL,
    parameters       jsonb NOT NULL,
    trajectories_in  bigint NOT NULL,
    trajectories_out bigint NOT NULL,
    published_at     timestamptz NOT NULL DEFAULT now(),
    code_version     text NOT NULL
);
COMMENT ON TABLE catalog.releases IS
    'Published releases; release_name is the schema that holds the release tables.';
COMMENT ON COLUMN catalog.releases.k_counts IS
    'What k counts: distinct persons (default) or distinct trajectories.';

CREATE OR REPLACE VIEW catalog.latest AS
    SELECT DISTINCT ON (dataset, method) *
    FROM catalog.releases
    ORDER BY dataset, method, published_at DESC;
COMMENT ON VIEW catalog.latest IS 'The newest release of each dataset and method.';

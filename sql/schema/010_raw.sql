-- 010_raw: loaded input. One row per dataset, one partition of raw.points per dataset
-- (so a --replace swaps a partition in one transaction), persons with demographics.

CREATE TABLE IF NOT EXISTS raw.datasets (
    dataset_id     integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name           text NOT NULL UNIQUE CHECK (name ~ '^[a-z][a-z0-9_]{0,19}$'),
    source_file    text NOT NULL,
    source_sha256  text NOT NULL,
    persons_file   text,
    loaded_at      timestamptz NOT NULL DEFAULT now(),
    n_points       bigint NOT NULL,
    n_trajectories bigint NOT NULL,
    n_persons      bigint NOT NULL,
    t_min          timestamptz NOT NULL,
    t_max          timestamptz NOT NULL,
    lon_median     double precision NOT NULL,
    lat_median     double precision NOT NULL,
    load_report    jsonb NOT NULL
);
COMMENT ON TABLE raw.datasets IS 'One row per loaded dataset: provenance, counts and the load report.';

CREATE TABLE IF NOT EXISTS raw.points (
    dataset_id integer NOT NULL,
    traj_id    text NOT NULL,
    user_id    text NOT NULL,
    t          timestamptz NOT NULL,
    lon        double precision NOT NULL,
    lat        double precision NOT NULL,
    -- Computed by the server during COPY: cheaper than shipping WKB from Python.
    geom       geometry(Point, 4326)
               GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(lon, lat), 4326)) STORED
) PARTITION BY LIST (dataset_id);
COMMENT ON TABLE raw.points IS 'Raw GPS fixes, one row per fix, partitioned by dataset.';

-- Per partition (= per dataset), so dataset_id is not part of the keys. The loader builds
-- the same indexes on each dataset's leaves (sql/load/index_leaf.sql) and attaching them
-- adopts them. No spatial index: 011_raw_points_indexes.sql says why.
CREATE INDEX IF NOT EXISTS points_traj_t_idx ON raw.points (traj_id, t);
CREATE INDEX IF NOT EXISTS points_t_idx ON raw.points (t);

-- One partition per dataset as well (012_raw_persons_by_dataset.sql says why).
CREATE TABLE IF NOT EXISTS raw.persons (
    dataset_id integer NOT NULL REFERENCES raw.datasets ON DELETE CASCADE,
    user_id    text NOT NULL,
    age        integer,
    sex        text,
    education  text,
    income     double precision,
    attributes jsonb NOT NULL DEFAULT '{}'::jsonb,
    PRIMARY KEY (dataset_id, user_id)
) PARTITION BY LIST (dataset_id);
COMMENT ON TABLE raw.persons IS
    'Demographic attributes per person; columns other than the known ones go to attributes.';

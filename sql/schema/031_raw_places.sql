-- 031_raw_places: the places of a place-sequence dataset (stations, cell towers), loaded by
-- `anonymizers load VISITS --places PLACES` (anonymizers/loading/places.py). Safe to re-run.
--
-- A visit is stored as an ordinary fix in raw.points at its place's exact lon/lat, so every
-- family runs on place datasets unchanged. Its place is recovered by the exact join
--     raw.points (dataset_id, lon, lat) = raw.places (dataset_id, lon, lat)
-- which is why two places of a dataset never share coordinates (UNIQUE below; the loader
-- refuses such a file first, with a message). The loader writes both sides by binary COPY
-- from the same float64 values, so the equality is exact, not within a tolerance.
--
-- Private like the rest of raw (privacy rule 6): which places a dataset has says where its
-- persons could be observed, so analyst reads none of it (998_post.sql revokes raw from
-- PUBLIC; this file revokes again so that applying it alone, after 998, leaves nothing
-- granted).
--
-- ON DELETE CASCADE: the places belong to one version of a dataset. `load --replace`
-- deletes the old raw.datasets row inside its publishing transaction
-- (sql/load/drop_dataset.sql), so the old places go with the old points; the new version's
-- places are copied in by that same transaction (anonymizers/loading/store.py).
CREATE TABLE IF NOT EXISTS raw.places (
    dataset_id integer NOT NULL REFERENCES raw.datasets ON DELETE CASCADE,
    place      text NOT NULL,
    lon        double precision NOT NULL,
    lat        double precision NOT NULL,
    geom       geometry(Point, 4326)
               GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(lon, lat), 4326)) STORED,
    PRIMARY KEY (dataset_id, place),
    UNIQUE (dataset_id, lon, lat)
);
COMMENT ON TABLE raw.places IS
    'Places of place-sequence datasets (stations, cell towers), WGS84. A visit is a fix of '
    'raw.points at its place''s exact lon/lat: join on (dataset_id, lon, lat) to recover it. '
    'Dropped with their dataset, also by load --replace.';
COMMENT ON COLUMN raw.places.place IS 'The place''s name as in the places file.';
REVOKE ALL ON raw.places FROM PUBLIC;

ALTER TABLE raw.datasets ADD COLUMN IF NOT EXISTS places_file text;
COMMENT ON COLUMN raw.datasets.places_file IS
    'The places file of a place-sequence dataset (raw.places); NULL for GPS fixes.';

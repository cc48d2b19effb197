-- Verifier of trajectory groups (seed 004), place-sequence dataset: which place each fix of
-- the window visits, re-derived from raw data (never from the anonymizer's work tables).
-- A fix visits the place of the dataset at exactly its lon/lat (raw.places is unique on
-- them); fixes elsewhere visit nothing. Of several fixes of a trajectory at one instant the
-- one at the first place (by name) is kept. tgv_places holds ALL the dataset's places in
-- the release's CRS: the public network, whose Delaunay edges are the neighbours.
-- Params: dataset_id, window_start, window_end (half-open), srid.
DROP TABLE IF EXISTS pg_temp.tgv_fixes, pg_temp.tgv_places;
CREATE TEMP TABLE tgv_places ON COMMIT DROP AS
SELECT place, ST_Transform(geom, %(srid)s) AS geom
FROM raw.places
WHERE dataset_id = %(dataset_id)s;
ALTER TABLE tgv_places ADD PRIMARY KEY (place);
CREATE INDEX ON tgv_places USING gist (geom);
ANALYZE tgv_places;

CREATE TEMP TABLE tgv_fixes ON COMMIT DROP AS
SELECT DISTINCT ON (p.traj_id, p.t) p.traj_id AS traj, p.user_id AS person, p.t, pl.place
FROM raw.points AS p
JOIN raw.places AS pl
  ON pl.dataset_id = p.dataset_id AND pl.lon = p.lon AND pl.lat = p.lat
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz
  AND p.t < %(window_end)s::timestamptz
ORDER BY p.traj_id, p.t, pl.place;

-- Verifier of trajectory groups (seed 004), places=voronoi: which cell of the published
-- generalization release {cells} each fix of the window visits, re-derived from raw data
-- (never from the anonymizer's work tables): the cell whose polygon holds the fix (on a
-- shared edge, the first by name), named by its cell_id. tgv_places holds every cell of
-- that release, in this release's CRS (the places the published ones are checked against);
-- tgv_cells the same in the cells' own CRS, for the point-in-polygon join.
-- Params: dataset_id, window_start, window_end (half-open), srid, cells_srid.
-- Identifiers: cells (the generalization release's cells table).
DROP TABLE IF EXISTS pg_temp.tgv_fixes, pg_temp.tgv_places, pg_temp.tgv_cells;
CREATE TEMP TABLE tgv_cells ON COMMIT DROP AS
SELECT cell_id::text AS place, geom FROM {cells};
CREATE INDEX ON tgv_cells USING gist (geom);
ANALYZE tgv_cells;

CREATE TEMP TABLE tgv_places ON COMMIT DROP AS
SELECT place, ST_Transform(geom, %(srid)s) AS geom FROM tgv_cells;
ALTER TABLE tgv_places ADD PRIMARY KEY (place);

CREATE TEMP TABLE tgv_fixes ON COMMIT DROP AS
SELECT DISTINCT ON (p.traj_id, p.t) p.traj_id AS traj, p.user_id AS person, p.t, c.place
FROM raw.points AS p
JOIN tgv_cells AS c
  ON ST_Intersects(c.geom, ST_Transform(p.geom, %(cells_srid)s))
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz
  AND p.t < %(window_end)s::timestamptz
ORDER BY p.traj_id, p.t, c.place;

-- Cut the release window out of raw.points and project it to the release's metric CRS.
-- Runs once per DAG run; re-running replaces the table (tasks are idempotent).
-- Params: dataset_id, window_start, window_end (half-open [start, end)), srid.
-- Identifiers: work (the run's work schema).
DROP TABLE IF EXISTS {work}.points;
CREATE TABLE {work}.points AS
SELECT p.traj_id,
       p.user_id,
       p.t,
       ST_Transform(p.geom, %(srid)s)::geometry(Point, %(srid)s) AS geom
FROM raw.points AS p
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s
  AND p.t < %(window_end)s;
CREATE INDEX ON {work}.points (traj_id, t);
ANALYZE {work}.points;

-- anonymizers compare, 1/4: the window's raw fixes in the comparison's metric CRS, once for
-- every method compared (a temporary table of this session: the data owner's tool reads raw
-- data; nothing here is published).
-- Params: dataset, window_start, window_end (half-open), srid.
DROP TABLE IF EXISTS pg_temp.compare_fixes;
CREATE TEMP TABLE compare_fixes AS
SELECT p.traj_id, p.user_id, p.t, ST_Transform(p.geom, %(srid)s) AS xy
FROM raw.points AS p
JOIN raw.datasets AS d USING (dataset_id)
WHERE d.name = %(dataset)s
  AND p.t >= %(window_start)s::timestamptz
  AND p.t < %(window_end)s::timestamptz;
CREATE INDEX ON compare_fixes USING gist (xy);
ANALYZE compare_fixes;
-- The extent the random queries and the flow lattice are drawn over: the central 98 per
-- cent of the fixes on each axis (outliers would stretch it over empty land).
SELECT count(*) AS fixes,
       percentile_cont(0.01) WITHIN GROUP (ORDER BY ST_X(xy)) AS x0,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY ST_X(xy)) AS x1,
       percentile_cont(0.01) WITHIN GROUP (ORDER BY ST_Y(xy)) AS y0,
       percentile_cont(0.99) WITHIN GROUP (ORDER BY ST_Y(xy)) AS y1
FROM compare_fixes;

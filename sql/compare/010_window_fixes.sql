-- anonymizers compare, 1/4: the window's raw fixes in the comparison's metric CRS, once for
-- every method compared (a temporary table of this session: the data owner's tool reads raw
-- data; nothing here is published).
DROP TABLE IF EXISTS pg_temp.compare_fixes;
-- xyt: the fix in space and time (seconds since the window start as z), for the n-D
-- index of the footprint (035). sampled: the fixes the share of fixes published is counted
-- on, all of them up to `sample`, else that many in an order that follows neither ids nor
-- data (md5), the same for every release of the comparison.
-- Params: dataset, window_start, window_end (half-open), srid, sample.
CREATE TEMP TABLE compare_fixes AS
SELECT p.traj_id, p.user_id, p.t, xy,
       ST_MakePoint(ST_X(xy), ST_Y(xy),
                    extract(epoch FROM p.t - %(window_start)s::timestamptz)) AS xyt,
       row_number() OVER (ORDER BY md5(p.traj_id || ':' || p.t::text), p.traj_id, p.t)
           <= %(sample)s AS sampled
FROM raw.points AS p
CROSS JOIN LATERAL ST_Transform(p.geom, %(srid)s) AS xy
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

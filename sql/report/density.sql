-- The "before" view of a release report (issue 11): the raw fixes of the release's window,
-- projected to its SRID, counted in the squares of fixed lattices (one per size in
-- %(sizes)s metres, anchored at the CRS origin: no square depends on the data). A square
-- is returned only when at least k distinct persons have a fix in it (privacy rule 1: no
-- figure from fewer than k persons), its counts through the interval filter (rule 4).
-- Never an individual fix. The window cut is the pipeline's (sql/generalization/
-- 010_project_window.sql): half-open window, fixes outside the CRS's area of use left out.
-- Params: dataset, window_start, window_end, srid, lon_min, lon_max, lat_min, lat_max,
-- sizes (float8[]), k, count_interval. Columns: size, ix, iy (the square
-- [ix * size, (ix + 1) * size) x [iy * size, (iy + 1) * size)), n_persons, n_fixes.
WITH fixes AS (
    SELECT p.user_id, ST_Transform(p.geom, %(srid)s) AS geom
    FROM raw.points AS p
    JOIN raw.datasets AS d USING (dataset_id)
    WHERE d.name = %(dataset)s
      AND p.t >= %(window_start)s AND p.t < %(window_end)s
      AND p.lon BETWEEN %(lon_min)s AND %(lon_max)s
      AND p.lat BETWEEN %(lat_min)s AND %(lat_max)s
)
SELECT s.size, floor(ST_X(f.geom) / s.size)::bigint AS ix,
       floor(ST_Y(f.geom) / s.size)::bigint AS iy,
       catalog.interval_count(count(DISTINCT f.user_id), %(k)s, %(count_interval)s) AS n_persons,
       catalog.interval_count(count(*), %(k)s, %(count_interval)s) AS n_fixes
FROM fixes AS f
CROSS JOIN unnest(%(sizes)s::float8[]) AS s(size)
GROUP BY s.size, ix, iy
HAVING count(DISTINCT f.user_id) >= %(k)s
ORDER BY s.size, ix, iy;

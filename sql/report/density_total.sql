-- The number of raw fixes in a release's window (through the interval filter), against
-- which the report says what share of them the shown squares of the density view hold.
-- Params: as density.sql (sizes unused).
SELECT catalog.interval_count(count(*), %(k)s, %(count_interval)s) AS n_fixes
FROM raw.points AS p
JOIN raw.datasets AS d USING (dataset_id)
WHERE d.name = %(dataset)s
  AND p.t >= %(window_start)s AND p.t < %(window_end)s
  AND p.lon BETWEEN %(lon_min)s AND %(lon_max)s
  AND p.lat BETWEEN %(lat_min)s AND %(lat_max)s;

-- Aggregates verifier, zones=dataset: the window's fixes at the dataset's places (the exact
-- join of raw.points and raw.places on lon/lat, as the loader stores a visit), derived
-- again: agv_fixes (user_id, bin, zone_key = the place's name) and agv_zones (every place,
-- its point in the release's CRS; zone_rank: by name in byte order).
-- Params: dataset_id, window_start, window_end, bin_seconds, srid.
DROP TABLE IF EXISTS pg_temp.agv_fixes, pg_temp.agv_zones;
CREATE TEMP TABLE agv_fixes AS
SELECT p.user_id,
       floor(extract(epoch FROM p.t - %(window_start)s::timestamptz) / %(bin_seconds)s)::bigint
           AS bin,
       pl.place AS zone_key
FROM raw.places AS pl
JOIN raw.points AS p ON p.dataset_id = pl.dataset_id AND p.lon = pl.lon AND p.lat = pl.lat
WHERE pl.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz AND p.t < %(window_end)s::timestamptz;

CREATE TEMP TABLE agv_zones AS
SELECT place AS zone_key, rank() OVER (ORDER BY place COLLATE "C") AS zone_rank,
       ST_Transform(geom, %(srid)s) AS geom, ST_Transform(geom, %(srid)s) AS centroid
FROM raw.places
WHERE dataset_id = %(dataset_id)s;

-- Aggregates: the window's fixes on the places of a place-sequence dataset (loaded with
-- --places): every fix is a visit of the place at its exact coordinates (the loader stored
-- each visit at its place's lon/lat; raw.places is unique on them), so the exact join finds
-- it; a fix at no place is in no zone. The zones are the dataset's places (a public
-- network: those a published cell names are published as their points); zone_key is the
-- place's name, zone_rank orders places by name in byte order (the dominant zone's
-- tie-break). bin: as 010_grid_zones.sql.
-- Params: dataset_id, window_start, window_end, bin_seconds, srid. Identifiers: work.
DROP TABLE IF EXISTS {work}.ag_fixes, {work}.ag_zones;
CREATE TABLE {work}.ag_fixes AS
SELECT p.traj_id, p.user_id,
       floor(extract(epoch FROM p.t - %(window_start)s::timestamptz)
             / %(bin_seconds)s::float8)::integer AS bin,
       pl.place AS zone_key
FROM raw.points AS p
JOIN raw.places AS pl
  ON pl.dataset_id = p.dataset_id AND pl.lon = p.lon AND pl.lat = p.lat
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz
  AND p.t < %(window_end)s::timestamptz;

CREATE TABLE {work}.ag_zones AS
SELECT pl.place AS zone_key,
       dense_rank() OVER (ORDER BY pl.place COLLATE "C") AS zone_rank,
       ST_Transform(pl.geom, %(srid)s) AS geom,
       ST_Transform(pl.geom, %(srid)s) AS centroid
FROM raw.places AS pl
WHERE pl.dataset_id = %(dataset_id)s;
ALTER TABLE {work}.ag_zones ADD PRIMARY KEY (zone_key);

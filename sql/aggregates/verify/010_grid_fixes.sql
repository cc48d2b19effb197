-- Aggregates verifier, zones=grid: the window's fixes on the squares of the lattice of
-- cell_size metres anchored at the CRS origin, derived again from raw data (never the
-- anonymizer's tables): agv_fixes (user_id, bin, zone_key 'column:row') and agv_zones
-- (every square a fix of the window is in, its exact geometry and centre; zone_rank: by
-- column, then row). Only fixes inside the CRS's area of use count.
-- Params: dataset_id, window_start, window_end, bin_seconds, srid, cell_size, lon_min,
-- lon_max, lat_min, lat_max.
DROP TABLE IF EXISTS pg_temp.agv_fixes, pg_temp.agv_zones;
CREATE TEMP TABLE agv_fixes AS
WITH projected AS (
    SELECT p.user_id, p.t, ST_Transform(p.geom, %(srid)s) AS xy
    FROM raw.points AS p
    WHERE p.dataset_id = %(dataset_id)s
      AND p.t >= %(window_start)s::timestamptz AND p.t < %(window_end)s::timestamptz
      AND p.lon >= %(lon_min)s AND p.lon <= %(lon_max)s
      AND p.lat >= %(lat_min)s AND p.lat <= %(lat_max)s
)
SELECT user_id,
       floor(extract(epoch FROM t - %(window_start)s::timestamptz) / %(bin_seconds)s)::bigint
           AS bin,
       floor(ST_X(xy) / %(cell_size)s)::bigint AS col,
       floor(ST_Y(xy) / %(cell_size)s)::bigint AS row
FROM projected;
ALTER TABLE agv_fixes ADD COLUMN zone_key text;
UPDATE agv_fixes SET zone_key = col::text || ':' || row::text;

CREATE TEMP TABLE agv_zones AS
SELECT col::text || ':' || row::text AS zone_key,
       rank() OVER (ORDER BY col, row) AS zone_rank,
       ST_SetSRID(ST_MakeEnvelope(col * %(cell_size)s, row * %(cell_size)s,
                                  (col + 1) * %(cell_size)s, (row + 1) * %(cell_size)s),
                  %(srid)s) AS geom,
       ST_SetSRID(ST_MakePoint((col + 0.5) * %(cell_size)s, (row + 0.5) * %(cell_size)s),
                  %(srid)s) AS centroid
FROM (SELECT DISTINCT col, row FROM agv_fixes) AS squares;

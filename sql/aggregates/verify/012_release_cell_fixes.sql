-- Aggregates verifier, zones=voronoi: the window's fixes in the cells of the published
-- generalization release named by the manifest, derived again: agv_zones (every cell, its
-- geometry in this release's CRS, no centroid; zone_rank: the cell id) and agv_fixes
-- (user_id, bin, zone_key = the cell id; a fix on an edge shared by cells counts in the
-- cell of the smallest id, a fix outside every cell in none).
-- Params: dataset_id, window_start, window_end, bin_seconds, srid, cells_srid.
-- Identifiers: cells (the source release's cells table).
DROP TABLE IF EXISTS pg_temp.agv_fixes, pg_temp.agv_zones;
CREATE TEMP TABLE agv_zones AS
SELECT c.cell_id::text AS zone_key, c.cell_id::bigint AS zone_rank,
       ST_Transform(c.geom, %(srid)s) AS geom, NULL::geometry AS centroid, c.geom AS source_geom
FROM {cells} AS c;
CREATE INDEX ON agv_zones USING gist (source_geom);
ANALYZE agv_zones;

CREATE TEMP TABLE agv_fixes AS
SELECT p.user_id,
       floor(extract(epoch FROM p.t - %(window_start)s::timestamptz) / %(bin_seconds)s)::bigint
           AS bin,
       (SELECT z.zone_key FROM agv_zones AS z
        WHERE ST_Intersects(z.source_geom, ST_Transform(p.geom, %(cells_srid)s))
        ORDER BY z.zone_rank LIMIT 1) AS zone_key
FROM raw.points AS p
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz AND p.t < %(window_end)s::timestamptz;
DELETE FROM agv_fixes WHERE zone_key IS NULL;

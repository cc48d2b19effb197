-- Aggregates: the window's fixes on the cells of a published generalization release (its
-- Voronoi cells, or its grid), each published already with at least k persons: public
-- zones. A fix is in the cell that holds it (on a shared edge: the cell of the smaller id);
-- a fix outside every cell is in no zone. zone_key is the cell's id in that release,
-- zone_rank orders by it (the dominant zone's tie-break). Zones are published in this
-- release's CRS, without a centroid (the source release's are its own). bin: as
-- 010_grid_zones.sql.
-- Params: dataset_id, window_start, window_end, bin_seconds, srid, cells_srid.
-- Identifiers: work, cells (the source release's cells table).
DROP TABLE IF EXISTS {work}.ag_fixes, {work}.ag_zones;
CREATE TABLE {work}.ag_zones AS
SELECT c.cell_id::text AS zone_key, c.cell_id::bigint AS zone_rank,
       ST_Transform(c.geom, %(srid)s) AS geom, NULL::geometry AS centroid,
       c.geom AS cell_geom
FROM {cells} AS c;
ALTER TABLE {work}.ag_zones ADD PRIMARY KEY (zone_key);
CREATE INDEX ON {work}.ag_zones USING gist (cell_geom);
ANALYZE {work}.ag_zones;

CREATE TABLE {work}.ag_fixes AS
SELECT DISTINCT ON (p.traj_id, p.t) p.traj_id, p.user_id,
       floor(extract(epoch FROM p.t - %(window_start)s::timestamptz)
             / %(bin_seconds)s::float8)::integer AS bin,
       z.zone_key
FROM raw.points AS p
JOIN {work}.ag_zones AS z
  ON ST_Intersects(z.cell_geom, ST_Transform(p.geom, %(cells_srid)s))
WHERE p.dataset_id = %(dataset_id)s
  AND p.t >= %(window_start)s::timestamptz
  AND p.t < %(window_end)s::timestamptz
ORDER BY p.traj_id, p.t, z.zone_rank;

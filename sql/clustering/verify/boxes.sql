-- The published rectangles of a clustering release (TCAA) as the verifier reads them:
-- closed boxes at their time point (t in seconds since the epoch), by time point, and
-- every group with its published size (a group without a rectangle has no support).
-- Identifiers: release.
SELECT group_id, extract(epoch FROM t_start)::float8 AS t, ST_XMin(geom) AS x0,
       ST_YMin(geom) AS y0, ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
FROM {release}.group_regions
ORDER BY t, group_id, seq;

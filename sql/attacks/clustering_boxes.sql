-- Attack suite, clustering family (TCAA): every published rectangle as the verifier reads
-- it (a closed box at its time point, t in seconds since the epoch), by time point.
-- Identifiers: release.
SELECT group_id, extract(epoch FROM t_start)::float8 AS t, ST_XMin(geom) AS x0,
       ST_YMin(geom) AS y0, ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
FROM {release}.group_regions
ORDER BY t, group_id;

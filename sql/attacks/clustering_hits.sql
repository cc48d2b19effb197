-- Attack suite, clustering family (TCAA): every person's position at every published time
-- point (the verifier's interpolation, cl_verify_positions of verify/clustering_support.sql,
-- run first in the same transaction) with the groups whose rectangle at that time point
-- holds it (closed boxes, as the verifier reads them), by person and time.
-- Identifiers: release.
WITH boxes AS MATERIALIZED (
    SELECT group_id, t_start AS t, ST_XMin(geom) AS x0, ST_YMin(geom) AS y0,
           ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
    FROM {release}.group_regions
)
SELECT p.user_id::text, extract(epoch FROM p.t)::float8 AS t,
       coalesce(array_agg(b.group_id ORDER BY b.group_id)
                FILTER (WHERE b.group_id IS NOT NULL), '{{}}') AS groups
FROM cl_verify_positions AS p
LEFT JOIN boxes AS b
  ON b.t = p.t AND p.x BETWEEN b.x0 AND b.x1 AND p.y BETWEEN b.y0 AND b.y1
GROUP BY p.user_id, p.t, p.x, p.y
ORDER BY p.user_id COLLATE "C", p.t, p.x, p.y;

-- Attack suite, clustering family (TCAA): the anonymity set of every published group, the
-- persons whose position lies in its rectangle at every one of its time points (the
-- verifier's support, as pairs), after verify/clustering_support.sql in the same
-- transaction. Identifiers: release.
WITH boxes AS MATERIALIZED (
    SELECT group_id, seq, t_start AS t, ST_XMin(geom) AS x0, ST_YMin(geom) AS y0,
           ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
    FROM {release}.group_regions
),
inside AS (
    SELECT b.group_id, p.user_id, count(DISTINCT b.seq) AS n
    FROM cl_verify_positions AS p
    JOIN boxes AS b ON b.t = p.t AND p.x BETWEEN b.x0 AND b.x1 AND p.y BETWEEN b.y0 AND b.y1
    GROUP BY b.group_id, p.user_id
)
SELECT i.group_id, i.user_id::text
FROM inside AS i
JOIN (SELECT group_id, count(*) AS n FROM {release}.group_regions GROUP BY group_id) AS g
  USING (group_id)
WHERE i.n = g.n
ORDER BY i.group_id;

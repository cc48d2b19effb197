-- Attack suite, clustering family (TCAA): the anonymity set of every published group, the
-- persons whose position lies in its rectangle at every one of its time points (the
-- verifier's support, as pairs), from cl_verify_inside of verify/clustering_support.sql,
-- run first in the same transaction. Identifiers: release.
SELECT i.group_id, i.user_id::text
FROM (SELECT group_id, user_id, count(DISTINCT seq) AS n
      FROM cl_verify_inside GROUP BY group_id, user_id) AS i
JOIN (SELECT group_id, count(*) AS n FROM {release}.group_regions GROUP BY group_id) AS g
  USING (group_id)
WHERE i.n = g.n
ORDER BY i.group_id;

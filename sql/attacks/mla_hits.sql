-- Attack suite, clustering family (MLA, aligned): every raw fix of the window
-- (ml_verify_fixes) with the groups one of whose regions holds it (inside the closed
-- rectangle, t_start <= t < t_end, as the verifier matches them; ml_verify_regions), by
-- trajectory and time. Run after verify/clustering_sequence_fixes.sql and
-- verify/clustering_sequence_support.sql in the same transaction.
SELECT f.traj::text, f.person::text, extract(epoch FROM f.t)::float8 AS t,
       coalesce(array_agg(DISTINCT r.group_id) FILTER (WHERE r.group_id IS NOT NULL),
                '{{}}') AS groups
FROM ml_verify_fixes AS f
LEFT JOIN ml_verify_regions AS r
  ON f.xy && r.geom AND f.x BETWEEN r.x0 AND r.x1 AND f.y BETWEEN r.y0 AND r.y1
 AND f.t >= r.t_start AND f.t < r.t_end
GROUP BY f.traj, f.person, f.t, f.x, f.y
ORDER BY f.traj COLLATE "C", f.t, f.x, f.y;

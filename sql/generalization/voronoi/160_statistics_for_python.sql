-- Per-cell statistics joined with the generator, for the merge decisions in Python:
-- near_owners is the number of distinct owners with a fix within `reach` (the radius r)
-- of the generator, the rule the verifier checks on every data-derived generator.
-- Params: reach, count_persons. Identifiers: work.
SELECT c.cell_id, coalesce(s.n_points, 0), coalesce(s.sx, 0), coalesce(s.sy, 0),
       coalesce(s.sxxyy, 0), c.generator_persons, ST_X(c.centroid), ST_Y(c.centroid),
       (SELECT count(DISTINCT CASE WHEN %(count_persons)s THEN p.user_id ELSE p.traj_id END)
        FROM {work}.points AS p
        WHERE ST_DWithin(p.geom, c.centroid, %(reach)s)) AS near_owners,
       coalesce(s.displacement_sum_m, 0), coalesce(s.displacement_max_m, 0)
FROM {work}.cells AS c
LEFT JOIN {work}.cell_stats AS s USING (cell_id)
ORDER BY c.cell_id;

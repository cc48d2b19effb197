-- The published line (the centroids of its cells) of the first published sequence, by
-- anon_id, of each sampled input trajectory that has one, for cluster preservation.
-- The cells are those 050_published_sources.sql lists.
-- Params: chosen (integer[], trajectory numbers). Identifiers: work.
WITH lines AS (
    SELECT a.anon_id, n.traj_no,
           array_agg(ST_X(c.centroid) ORDER BY u.ord) AS xs,
           array_agg(ST_Y(c.centroid) ORDER BY u.ord) AS ys
    FROM metrics_trajectories AS n
    JOIN {work}.anonymized AS a ON a.source_traj_id = n.traj_id
    CROSS JOIN LATERAL unnest(a.cells) WITH ORDINALITY AS u(cell_id, ord)
    JOIN {work}.cell_map AS m ON m.cell_id = u.cell_id
    JOIN {work}.cells AS c ON c.cell_id = u.cell_id
    WHERE n.traj_no = ANY(%(chosen)s::integer[])
    GROUP BY a.anon_id, n.traj_no
)
SELECT DISTINCT ON (traj_no) traj_no, xs, ys
FROM lines
ORDER BY traj_no, anon_id;

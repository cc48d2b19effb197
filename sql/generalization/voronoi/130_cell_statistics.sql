-- Per cell: the sufficient statistics of its fixes (count, sums, sum of squares: the
-- centroid and RMS displacement of any union of cells follow without another pass over
-- the points), its distinct persons and trajectories, and the displacement of its fixes
-- to its generator (Andrienko's local measures). Identifiers: work.
DROP TABLE IF EXISTS {work}.cell_stats;
CREATE TABLE {work}.cell_stats AS
SELECT pc.cell_id,
       count(*) AS n_points,
       sum(ST_X(pc.geom)) AS sx, sum(ST_Y(pc.geom)) AS sy,
       sum(ST_X(pc.geom) ^ 2 + ST_Y(pc.geom) ^ 2) AS sxxyy,
       count(DISTINCT pc.user_id) AS n_persons,
       count(DISTINCT pc.traj_id) AS n_trajectories,
       sum(ST_Distance(pc.geom, c.centroid)) AS displacement_sum_m,
       max(ST_Distance(pc.geom, c.centroid)) AS displacement_max_m
FROM {work}.point_cells AS pc
JOIN {work}.cells AS c USING (cell_id)
GROUP BY pc.cell_id;

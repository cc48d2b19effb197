-- Per cell: the sufficient statistics of its fixes (count, sums, sum of squares: the
-- centroid and RMS displacement of any union of cells follow without another pass over
-- the points) and the displacement of its fixes to its generator (Andrienko's local
-- measures). Fixes in gaps (NULL cell) belong to no cell and are left out by the join.
-- (Distinct persons per cell are not needed here: a generator's support is counted when
-- it is computed, 150_merged_generator_support.sql.) Identifiers: work.
DROP TABLE IF EXISTS {work}.cell_stats;
CREATE TABLE {work}.cell_stats AS
SELECT pc.cell_id,
       count(*) AS n_points,
       sum(ST_X(pc.geom)) AS sx, sum(ST_Y(pc.geom)) AS sy,
       sum(ST_X(pc.geom) ^ 2 + ST_Y(pc.geom) ^ 2) AS sxxyy,
       sum(ST_Distance(pc.geom, c.centroid)) AS displacement_sum_m,
       max(ST_Distance(pc.geom, c.centroid)) AS displacement_max_m
FROM {work}.point_cells AS pc
JOIN {work}.cells AS c USING (cell_id)
GROUP BY pc.cell_id;

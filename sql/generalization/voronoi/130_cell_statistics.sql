-- Per cell: the sufficient statistics of its fixes (count, sums, sum of squares: the
-- centroid and RMS displacement of any union of cells follow without another pass over
-- the points) and the displacement of its fixes to its generator (Andrienko's local
-- measures), with the generator they were measured to. Fixes in gaps (NULL cell) belong
-- to no cell and are left out by the join.
-- (Distinct persons per cell are not needed here: a generator's support is counted when
-- it is computed, 150_merged_generator_support.sql.)
-- Every cell, after a full membership; after a membership update,
-- 131_cell_statistics_update.sql brings them up to date. Identifiers: work.
DROP TABLE IF EXISTS {work}.cell_stats;
CREATE TABLE {work}.cell_stats (
    cell_id integer PRIMARY KEY, n_points bigint, sx double precision, sy double precision,
    sxxyy double precision, displacement_sum_m double precision,
    displacement_max_m double precision, centroid geometry
);
INSERT INTO {work}.cell_stats
SELECT pc.cell_id,
       count(*) AS n_points,
       sum(ST_X(pc.geom)) AS sx, sum(ST_Y(pc.geom)) AS sy,
       sum(ST_X(pc.geom) ^ 2 + ST_Y(pc.geom) ^ 2) AS sxxyy,
       sum(ST_Distance(pc.geom, c.centroid)) AS displacement_sum_m,
       max(ST_Distance(pc.geom, c.centroid)) AS displacement_max_m,
       c.centroid
FROM {work}.point_cells AS pc
JOIN {work}.cells AS c USING (cell_id)
GROUP BY pc.cell_id, c.centroid;

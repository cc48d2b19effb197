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
-- One pass over the fixes, hashed by cell. The planner's estimate of the aggregates (25M
-- fixes: hundreds of millions) drowns the difference between plans, and among plans it
-- deems equal it takes one that reads the fixes in cell order: along the cell index, or
-- sorted on disk (25M fixes: 66 s, against 25 s hashed). Hence the settings, for this
-- statement only. (131_cell_statistics_update.sql sums some cells again the same way, with
-- the settings that suit a few cells: keep the two lists of sums alike.)
SET LOCAL enable_mergejoin = off;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_sort = off;
INSERT INTO {work}.cell_stats
SELECT s.*, c.centroid
FROM (
    SELECT pc.cell_id,
           count(*) AS n_points,
           sum(ST_X(pc.geom)) AS sx, sum(ST_Y(pc.geom)) AS sy,
           sum(ST_X(pc.geom) ^ 2 + ST_Y(pc.geom) ^ 2) AS sxxyy,
           sum(ST_Distance(pc.geom, c.centroid)) AS displacement_sum_m,
           max(ST_Distance(pc.geom, c.centroid)) AS displacement_max_m
    FROM {work}.point_cells AS pc
    JOIN {work}.cells AS c USING (cell_id)
    GROUP BY pc.cell_id
) AS s
JOIN {work}.cells AS c USING (cell_id);
RESET enable_mergejoin;  -- for the rest of the step's transaction
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_sort;

-- Per cell: the sufficient statistics of its fixes (count, sums, sum of squares: the
-- centroid and RMS displacement of any union of cells follow without another pass over
-- the points) and the displacement of its fixes to its generator (Andrienko's local
-- measures). Fixes in gaps (NULL cell) belong to no cell and are left out by the join.
-- (Distinct persons per cell are not needed here: a generator's support is counted when
-- it is computed, 150_merged_generator_support.sql.)
-- Recomputed for the cells in {recompute} only: all cells after a full membership, the
-- changed ones after an update (124_changed_cells.sql). An unchanged cell keeps its
-- polygon, generator and fixes (125_membership_update.sql), so its statistics stand;
-- those of cells that are gone are dropped. Identifiers: work, recompute.
CREATE TABLE IF NOT EXISTS {work}.cell_stats (
    cell_id integer PRIMARY KEY, n_points bigint, sx double precision, sy double precision,
    sxxyy double precision, displacement_sum_m double precision,
    displacement_max_m double precision
);
DELETE FROM {work}.cell_stats AS s
WHERE s.cell_id IN (SELECT cell_id FROM {recompute})
   OR NOT EXISTS (SELECT 1 FROM {work}.cells AS c WHERE c.cell_id = s.cell_id);
INSERT INTO {work}.cell_stats
SELECT pc.cell_id,
       count(*) AS n_points,
       sum(ST_X(pc.geom)) AS sx, sum(ST_Y(pc.geom)) AS sy,
       sum(ST_X(pc.geom) ^ 2 + ST_Y(pc.geom) ^ 2) AS sxxyy,
       sum(ST_Distance(pc.geom, c.centroid)) AS displacement_sum_m,
       max(ST_Distance(pc.geom, c.centroid)) AS displacement_max_m
FROM {work}.point_cells AS pc
JOIN {work}.cells AS c USING (cell_id)
WHERE pc.cell_id IN (SELECT cell_id FROM {recompute})
GROUP BY pc.cell_id;

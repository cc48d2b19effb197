-- The per-cell statistics of 130_cell_statistics.sql after a membership update
-- (125_membership_update.sql), from the fixes that changed cell ({work}.relocated, old and
-- new cell) rather than from every fix of every changed cell: a cell's fixes change only
-- by those, and its count, sums and displacement sum are sums over its fixes, so each
-- takes the moved fixes' sum in and out. (25M-fix city: the changed cells hold most
-- fixes, and summing them again took 45 s a step.)
-- A cell is summed again in full where a delta cannot say it: a new cell, a generator
-- that moved (every distance changes: the merged cells), or a fix leaving with the
-- cell's largest displacement (the largest of those left is not known). Cells that are
-- gone lose their statistics. Identifiers: work.
DELETE FROM {work}.cell_stats AS s
WHERE NOT EXISTS (SELECT 1 FROM {work}.cells AS c WHERE c.cell_id = s.cell_id);

DROP TABLE IF EXISTS pg_temp.moved_sums;
CREATE TEMP TABLE moved_sums ON COMMIT DROP AS
SELECT m.cell_id, sum(m.sign) AS n_points, sum(m.sign * ST_X(m.geom)) AS sx,
       sum(m.sign * ST_Y(m.geom)) AS sy,
       sum(m.sign * (ST_X(m.geom) ^ 2 + ST_Y(m.geom) ^ 2)) AS sxxyy,
       sum(m.sign * ST_Distance(m.geom, s.centroid)) AS displacement_sum_m,
       max(ST_Distance(m.geom, s.centroid)) FILTER (WHERE m.sign > 0) AS max_in,
       max(ST_Distance(m.geom, s.centroid)) FILTER (WHERE m.sign < 0) AS max_out
FROM (
    SELECT r.old_cell AS cell_id, -1 AS sign, r.geom FROM {work}.relocated AS r
    WHERE r.old_cell IS NOT NULL AND r.cell_id IS DISTINCT FROM r.old_cell
    UNION ALL
    SELECT r.cell_id, 1, r.geom FROM {work}.relocated AS r
    WHERE r.cell_id IS NOT NULL AND r.cell_id IS DISTINCT FROM r.old_cell
) AS m
JOIN {work}.cell_stats AS s USING (cell_id)
GROUP BY m.cell_id;
ANALYZE moved_sums;

DROP TABLE IF EXISTS pg_temp.summed_again;
CREATE TEMP TABLE summed_again ON COMMIT DROP AS
SELECT c.cell_id, c.centroid
FROM {work}.cells AS c
LEFT JOIN {work}.cell_stats AS s USING (cell_id)
LEFT JOIN moved_sums AS m USING (cell_id)
WHERE s.cell_id IS NULL OR NOT s.centroid ~= c.centroid
   OR m.max_out >= s.displacement_max_m;
-- (Unanalysed, a few dozen cells were planned as a thousand, and their fixes read by a
-- merge join along the whole point_cells (cell_id) index.)
ANALYZE summed_again;

UPDATE {work}.cell_stats AS s
SET n_points = s.n_points + m.n_points, sx = s.sx + m.sx, sy = s.sy + m.sy,
    sxxyy = s.sxxyy + m.sxxyy, displacement_sum_m = s.displacement_sum_m + m.displacement_sum_m,
    displacement_max_m = greatest(s.displacement_max_m, m.max_in)
FROM moved_sums AS m
WHERE m.cell_id = s.cell_id
  AND NOT EXISTS (SELECT 1 FROM summed_again AS a WHERE a.cell_id = s.cell_id);
-- A cell left without fixes has no statistics (160 reads it as zeros), as in a full pass.
DELETE FROM {work}.cell_stats WHERE n_points = 0;

DELETE FROM {work}.cell_stats WHERE cell_id IN (SELECT cell_id FROM summed_again);
-- Their fixes through the cell index, cell by cell: above a few dozen cells the planner
-- took a merge join along the whole index instead (5M-fix city, 45 cells, 575,852
-- fixes: 1.05 s against 3.9 s, EXPLAIN ANALYZE). Grouped by the cell id alone, in memory,
-- the generator joined after: grouped by (id, generator) the fixes were sorted, on disk
-- (60 cells, 781,927 fixes: 1.17 s against 2.05 s). The sums are those of the full pass,
-- 130_cell_statistics.sql: keep the two lists alike.
SET LOCAL enable_mergejoin = off;
SET LOCAL work_mem = '256MB';
INSERT INTO {work}.cell_stats
SELECT s.*, a.centroid
FROM (
    SELECT pc.cell_id,
           count(*) AS n_points,
           sum(ST_X(pc.geom)) AS sx, sum(ST_Y(pc.geom)) AS sy,
           sum(ST_X(pc.geom) ^ 2 + ST_Y(pc.geom) ^ 2) AS sxxyy,
           sum(ST_Distance(pc.geom, a.centroid)) AS displacement_sum_m,
           max(ST_Distance(pc.geom, a.centroid)) AS displacement_max_m
    FROM summed_again AS a
    JOIN {work}.point_cells AS pc USING (cell_id)
    GROUP BY pc.cell_id
) AS s
JOIN summed_again AS a USING (cell_id);
RESET enable_mergejoin;  -- for the rest of the step's transaction

-- The grid's fixes summed per cell for 040_displacement.sql: per cell its fixes, the sum
-- of their distances to the cell's centroid and their distinct persons; one more row with
-- a NULL cell holds the distinct persons with a fix in any cell (the Voronoi methods'
-- {work}.cell_displacement, which progressive generalization writes from the fixes' cells
-- it keeps in memory, has the same shape). Distances are summed as numeric: in floating
-- point they depend on the order parallel workers combine them in, so a re-run published
-- figures that differed in the last digits.
-- Hashed by cell, not read in cell order: the planner's estimate of the aggregates (25M
-- fixes: hundreds of millions) drowns the difference between plans, and among plans it
-- deems equal it took one reading the fixes in cell order (25M fixes: 68.8 s).
-- {located} is 039_located_grid_fixes.sql's view (each fix's cell and position); the
-- persons come from {work}.memberships without the points: grouping the join by person
-- would sort every fix by a text key. Temporary: it lives as long as the metrics step's
-- transaction. Identifiers: work, located (schema, table).
SET LOCAL work_mem = '256MB';
SET LOCAL enable_mergejoin = off;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_sort = off;
DROP TABLE IF EXISTS pg_temp.cell_displacement;
CREATE TEMP TABLE cell_displacement ON COMMIT DROP AS
WITH per_cell AS (
    SELECT f.cell_id, count(*) AS n_points,
           sum(ST_Distance(f.geom, c.centroid)::numeric)::float8 AS distance_sum
    FROM {located} AS f
    JOIN {work}.cells AS c ON c.cell_id = f.cell_id
    GROUP BY f.cell_id
), cell_persons AS (
    SELECT f.cell_id, f.user_id
    FROM {work}.memberships AS f
    JOIN {work}.cells AS c ON c.cell_id = f.cell_id
    GROUP BY f.cell_id, f.user_id
)
SELECT d.cell_id, d.n_points, d.distance_sum, p.persons
FROM per_cell AS d
JOIN (SELECT cell_id, count(*) AS persons FROM cell_persons GROUP BY cell_id) AS p
  USING (cell_id)
UNION ALL
SELECT NULL, NULL, NULL, count(DISTINCT user_id) FROM cell_persons;
-- The planner settings go back for the rest of the step's transaction; work_mem stays as
-- 005_work_mem.sql set it for the whole step.
RESET enable_mergejoin;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_sort;

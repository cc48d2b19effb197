-- Andrienko's displacement (seed 000 §6.1.2): the distance from every fix of the window that
-- lies in a cell to the centroid of that cell, as aggregates over at least k persons
-- (privacy rule 3; no maximum, it is one fix's distance: issue 7, finding 5):
--   local_mean_avg  the average over the cells whose fixes belong to >= k persons of the
--                   cell's average displacement (each such cell weighs the same);
--   global_sum, global_mean  the sum and the average over all those fixes, NULL when they
--                   belong to fewer than k persons.
-- The definitions of anonymizers.metrics.displacement.displacement_measures, summed here so
-- that no fix leaves the database. {fixes} is the table of the fixes' cells:
-- {work}.point_cells (Voronoi methods) or {work}.memberships (grid); {located} has each
-- fix's cell and position: point_cells itself, or 039_located_grid_fixes.sql's view (the
-- grid's memberships have no position: it joins them to the points).
-- Sums and averages are numeric: in floating point they depend on the order parallel
-- workers combine them in, so a re-run published figures that differed in the last digits.
-- Hashed by cell, not read in cell order: the planner's estimate of the aggregates (25M
-- fixes: hundreds of millions) drowns the difference between plans, and among plans it
-- deems equal it took one reading the fixes in cell order (25M fixes: 68.8 s).
-- Params: k. Identifiers: work, fixes (schema, table), located (schema, table).
SET LOCAL work_mem = '256MB';
SET LOCAL enable_mergejoin = off;
SET LOCAL enable_indexscan = off;
SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_sort = off;
WITH per_cell AS (
    SELECT f.cell_id, count(*) AS n,
           sum(ST_Distance(f.geom, c.centroid)::numeric) AS total
    FROM {located} AS f
    JOIN {work}.cells AS c ON c.cell_id = f.cell_id
    GROUP BY f.cell_id
), cell_persons AS (
    -- Without the points: each row of {fixes} is one fix of {work}.points with its person
    -- (the membership steps derive it from them), and grouping the join by person would
    -- sort every fix by a text key.
    SELECT f.cell_id, f.user_id
    FROM {fixes} AS f
    JOIN {work}.cells AS c ON c.cell_id = f.cell_id
    GROUP BY f.cell_id, f.user_id
), persons AS (
    SELECT cell_id, count(*) AS persons FROM cell_persons GROUP BY cell_id
), overall AS (
    SELECT sum(n) AS n, sum(total) AS total,
           (SELECT count(DISTINCT user_id) FROM cell_persons) AS persons
    FROM per_cell
)
SELECT (SELECT avg(d.total / d.n)::float8
        FROM per_cell AS d JOIN persons AS p USING (cell_id)
        WHERE p.persons >= %(k)s) AS local_mean_avg,
       CASE WHEN persons >= %(k)s THEN total::float8 END AS global_sum,
       CASE WHEN persons >= %(k)s THEN (total / n)::float8 END AS global_mean
FROM overall;
-- The planner settings go back for the rest of the step's transaction; work_mem stays as
-- 005_input_trajectories.sql set it for the whole step.
RESET enable_mergejoin;
RESET enable_indexscan;
RESET enable_bitmapscan;
RESET enable_sort;

-- Andrienko's displacement (seed 000 §6.1.2): the distance from every fix of the window that
-- lies in a cell to the centroid of that cell, as aggregates over at least k persons
-- (privacy rule 3; no maximum, it is one fix's distance: issue 7, finding 5):
--   local_mean_avg  the average over the cells whose fixes belong to >= k persons of the
--                   cell's average displacement (each such cell weighs the same);
--   global_sum, global_mean  the sum and the average over all those fixes, NULL when they
--                   belong to fewer than k persons.
-- The definitions of anonymizers.families.generalization.displacement.displacement_measures, from the
-- fixes summed per cell so that no fix leaves the database or the step that holds them:
-- {sums} has per cell (cell_id, n_points, distance_sum, persons) and, with a NULL cell,
-- the distinct persons with a fix in any cell. Voronoi methods: the work schema's
-- cell_displacement, written by progressive generalization from the fixes' cells it keeps
-- in memory; the grid: 041_grid_cell_displacement.sql's table.
-- Params: k. Identifiers: sums (schema, table).
WITH per_cell AS (
    SELECT cell_id, n_points, distance_sum, persons FROM {sums} WHERE cell_id IS NOT NULL
), overall AS (
    SELECT sum(n_points) AS n, sum(distance_sum::numeric) AS total,
           (SELECT persons FROM {sums} WHERE cell_id IS NULL) AS persons
    FROM per_cell
)
SELECT (SELECT avg(distance_sum::numeric / n_points)::float8
        FROM per_cell WHERE persons >= %(k)s) AS local_mean_avg,
       CASE WHEN persons >= %(k)s THEN total::float8 END AS global_sum,
       CASE WHEN persons >= %(k)s THEN (total / n)::float8 END AS global_mean
FROM overall;

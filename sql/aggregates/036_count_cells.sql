-- How many cells (zone, bin; origin and destination for od) the run counted, for the task
-- log. Identifiers: {work}.
SELECT count(*) AS n_cells FROM {work}.ag_cells;

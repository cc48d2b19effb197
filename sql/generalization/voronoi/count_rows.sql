-- Rows of one table of the tessellation's steps: the size of the arrays a reader streams
-- it into (points, characteristic_points), the generators left after a step of
-- progressive generalization, or whether progressive_log already holds a run.
-- Identifiers: table (schema-qualified).
SELECT count(*) AS n_rows FROM {table}

-- The number of rows of one release table (the size of what is published anyway).
-- Identifiers: table (schema, name).
SELECT count(*) AS n_rows FROM {table};

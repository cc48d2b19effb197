-- The distinct values of one published column (a count of people, checked against k and
-- the interval filter's lattice). Identifiers: source (schema, table), column.
SELECT DISTINCT {column} AS value FROM {source};

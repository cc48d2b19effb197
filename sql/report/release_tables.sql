-- The tables of a release with the COMMENT ON text an analyst reads in psql, and whether
-- each exists (metric_series, for instance, is absent from releases older than it).
-- Params: schema. Identifiers: none.
SELECT c.relname AS table_name, obj_description(c.oid, 'pg_class') AS comment
FROM pg_class AS c
JOIN pg_namespace AS n ON n.oid = c.relnamespace
WHERE n.nspname = %(schema)s AND c.relkind IN ('r', 'p')
ORDER BY c.relname;

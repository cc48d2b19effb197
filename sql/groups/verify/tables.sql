-- Verifier of trajectory groups (seed 004): which of the named tables exist in a schema (the
-- release's tables, or the private member tables of the run's work schema).
-- Params: schema, tables (text[]).
SELECT table_name
FROM information_schema.tables
WHERE table_schema = %(schema)s AND table_name = ANY (%(tables)s::text[])
ORDER BY 1;

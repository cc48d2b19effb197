-- Every table of a release schema. Params: schema.
SELECT table_name
FROM information_schema.tables
WHERE table_schema = %(schema)s AND table_type = 'BASE TABLE'
ORDER BY 1;

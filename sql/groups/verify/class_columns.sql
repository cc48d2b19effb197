-- Verifier of trajectory groups (seed 004): the columns of a release's demographic_classes
-- (the bounds are one <attribute>_lo / <attribute>_hi pair per attribute of the grid).
-- Params: schema (the schema under test, as a value).
SELECT column_name
FROM information_schema.columns
WHERE table_schema = %(schema)s AND table_name = 'demographic_classes'
ORDER BY ordinal_position;

-- Text-like columns of a release's data tables (manifest and metrics are the pipeline's
-- own metadata and are not scanned), JSON included (a release's lists of names, e.g. the
-- places of a group). Params: schema (the release schema, as a value).
SELECT table_name, column_name
FROM information_schema.columns
WHERE table_schema = %(schema)s
  AND table_name NOT IN ('manifest', 'metrics')
  AND (data_type IN ('text', 'character varying', 'character', 'uuid', 'json', 'jsonb')
       OR udt_name IN ('_text', '_varchar', '_uuid'))
ORDER BY table_name, column_name;

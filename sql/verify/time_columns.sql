-- Columns of a release's data tables that hold time (manifest and metrics are the
-- pipeline's own metadata: the window is the release's time). Params: schema.
SELECT table_name, column_name, data_type
FROM information_schema.columns
WHERE table_schema = %(schema)s
  AND table_name NOT IN ('manifest', 'metrics', 'metric_series')
  AND (data_type LIKE 'time%%' OR data_type = 'date' OR data_type = 'interval'
       OR udt_name IN ('_timestamptz', '_timestamp', '_date', 'tstzrange', 'tsrange'))
ORDER BY 1, 2;

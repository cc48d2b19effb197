-- Integer columns of a release's data tables (candidates for counts of people; the
-- verifier keeps those named n_persons*, n_trajectories*, ...). Params: schema.
SELECT table_name, column_name
FROM information_schema.columns
WHERE table_schema = %(schema)s
  AND table_name NOT IN ('manifest', 'metrics', 'metric_series')
  AND data_type IN ('smallint', 'integer', 'bigint', 'numeric')
ORDER BY 1, 2;

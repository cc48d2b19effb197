-- Values of a timestamptz column that are not a time point of the release's declared time
-- grid: window_start + i * step_s seconds, inside the window or at its end (the end of a
-- published interval may be window_end, which the manifest publishes anyway) (rule 5: no
-- time finer than the method publishes). Params: window_start, window_end, step_s.
-- Identifiers: source (schema, table), column.
SELECT count(*) AS n_off
FROM {source}
WHERE {column} IS NOT NULL
  AND ({column} < %(window_start)s OR {column} > %(window_end)s
       OR ({column} <> %(window_end)s
           AND mod(extract(epoch FROM {column} - %(window_start)s::timestamptz)::numeric,
                   %(step_s)s::numeric) <> 0));

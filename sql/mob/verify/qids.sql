-- The quasi-identifiers (raw.qids, seed 003 §3) of a dataset on the release's time grid:
-- a QID time t maps to the time point floor((t - window_start) / interval_s) when it lies
-- in [window_start, window_end); other times are not the release's. The verifier drops
-- the points at which the person has no position itself (they cannot link).
-- Columns (a CSV with a header, read by name): user_id, time point i.
-- Params: dataset_id, window_start, window_end, interval_s.
COPY (
    SELECT DISTINCT user_id,
           floor(extract(epoch FROM t - %(window_start)s::timestamptz)
                 / %(interval_s)s::numeric)::integer AS i
    FROM raw.qids
    WHERE dataset_id = %(dataset_id)s
      AND t >= %(window_start)s
      AND t < %(window_end)s
) TO STDOUT (FORMAT csv, HEADER)

-- Distinct persons (what k counts) in a release's window.
-- Params: dataset_id, window_start, window_end.
SELECT count(DISTINCT user_id) AS owners
FROM raw.points
WHERE dataset_id = %(dataset_id)s AND t >= %(window_start)s AND t < %(window_end)s;

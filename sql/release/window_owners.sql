-- Distinct owners (persons or trajectories: what k counts) in a release's window.
-- Params: dataset_id, window_start, window_end, count_persons.
SELECT count(DISTINCT CASE WHEN %(count_persons)s THEN user_id ELSE traj_id END)
FROM raw.points
WHERE dataset_id = %(dataset_id)s AND t >= %(window_start)s AND t < %(window_end)s;

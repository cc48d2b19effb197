-- MOB family, preparation 1/3: the time points of the window at a constant rate
-- (Yarovoy et al. 2009, §6.1: one point every `interval`, 5 min there), aligned to the
-- window: t_i = window_start + i * interval for every t_i < window_end.
-- Re-running replaces the table (tasks are idempotent).
-- Params: window_start, window_end (half-open [start, end)), interval_s (seconds, > 0).
-- Identifiers: work (the run's work schema).
DROP TABLE IF EXISTS {work}.mob_time_points;
CREATE TABLE {work}.mob_time_points (
    t_index integer PRIMARY KEY,
    t       timestamptz NOT NULL
);
INSERT INTO {work}.mob_time_points (t_index, t)
SELECT i, %(window_start)s::timestamptz + i * make_interval(secs => %(interval_s)s)
FROM generate_series(
         0,
         -- the number of points is ceil(length / interval): the last one lies before the end
         ceil(extract(epoch FROM %(window_end)s::timestamptz - %(window_start)s::timestamptz)
              / %(interval_s)s)::integer - 1) AS i;
ANALYZE {work}.mob_time_points;
SELECT json_build_object('time_points', count(*)) AS counts FROM {work}.mob_time_points;

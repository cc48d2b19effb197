-- The verifier's own positions of every person on the release's time grid (seed 003, MOB):
-- at time point t_i = window_start + i * interval_s, the grid cell of the last fix with
-- t <= t_i of a trajectory of the person that runs at t_i (its first fix in the window
-- <= t_i <= its last fix in the window); of several such trajectories, the latest fix
-- (ties: the larger traj_id in byte order, COLLATE "C", as Python compares text). No
-- interpolation (seed 003 §6.1). Cells are anchored at the CRS origin:
-- (floor(x / cell_size), floor(y / cell_size)). Fixes outside the CRS's area of use are
-- not used, as in derive_sequences.sql.
--
-- Each fix owns the time points from its own time up to (not including) the next fix of
-- its trajectory; the last fix only a time point it falls on exactly. Epochs are numeric
-- (exact for microsecond timestamps), so a fix on a grid time owns that time point.
-- Reads raw.points only. Params: dataset_id, window_start, window_end, srid, cell_size,
-- interval_s, lon_min, lon_max, lat_min, lat_max.
COPY (
    WITH fixes AS (
        SELECT traj_id, user_id, t,
               floor(ST_X(g) / %(cell_size)s)::bigint AS cx,
               floor(ST_Y(g) / %(cell_size)s)::bigint AS cy,
               extract(epoch FROM t - %(window_start)s::timestamptz)
                   / %(interval_s)s::numeric AS at,
               extract(epoch FROM lead(t) OVER (PARTITION BY traj_id ORDER BY t)
                                  - %(window_start)s::timestamptz)
                   / %(interval_s)s::numeric AS next_at
        FROM (SELECT traj_id, user_id, t, ST_Transform(geom, %(srid)s) AS g
              FROM raw.points
              WHERE dataset_id = %(dataset_id)s
                AND t >= %(window_start)s
                AND t < %(window_end)s
                AND lon BETWEEN %(lon_min)s AND %(lon_max)s
                AND lat BETWEEN %(lat_min)s AND %(lat_max)s) AS p
    ), owned AS (
        SELECT f.user_id, f.traj_id, f.t, f.cx, f.cy, i
        FROM fixes AS f
        CROSS JOIN LATERAL generate_series(
            ceil(f.at)::integer,
            CASE WHEN f.next_at IS NULL THEN floor(f.at)::integer
                 ELSE ceil(f.next_at)::integer - 1 END) AS i
    )
    SELECT DISTINCT ON (user_id, i) user_id, i, cx, cy
    FROM owned
    ORDER BY user_id, i, t DESC, traj_id COLLATE "C" DESC
) TO STDOUT (FORMAT csv)

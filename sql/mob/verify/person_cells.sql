-- The verifier's own positions of every person on the release's time grid (seed 003, MOB):
-- at time point t_i = window_start + i * interval_s, the grid cell of the last fix with
-- t <= t_i of a trajectory of the person that runs at t_i (its first fix in the window
-- <= t_i <= its last fix in the window); of several such trajectories, the latest fix
-- (ties: the larger traj_id in byte order, COLLATE "C", as Python compares text). No
-- interpolation (seed 003 §6.1). That is the default position rule; the release's manifest
-- names its own: position_scope 'person' lets a fix last until the person's next fix, of
-- any trajectory, and the person's last fix of the window until the window's end;
-- position_lookback L (seconds) ends a fix's time points L after its time.
-- Cells are anchored at the CRS origin:
-- (floor(x / cell_size), floor(y / cell_size)). Fixes outside the CRS's area of use are
-- not used, as in sql/verify/derive_sequences.sql.
--
-- Each fix owns the time points from its own time up to (not including) the next fix of
-- its trajectory; the last fix only a time point it falls on exactly. Epochs are numeric
-- (exact for microsecond timestamps), so a fix on a grid time owns that time point.
-- Only trajectories whose time span overlaps another trajectory of the same person
-- ("shared") go through DISTINCT ON; the others stream out in index order: sorting every
-- (person, time point) spilled 0.7 GB to disk for 45,000 persons x 288 time points.
-- Columns (a CSV with a header, read by name): user_id, time point i, cell cx, cy.
-- Reads raw.points only. Params: dataset_id, window_start, window_end, srid, cell_size,
-- interval_s, lon_min, lon_max, lat_min, lat_max, position_scope ('trajectory' or 'person'),
-- position_lookback_s (seconds, or NULL: no limit).
COPY (
    WITH windowed AS NOT MATERIALIZED (
        SELECT traj_id, user_id, t, geom
        FROM raw.points
        WHERE dataset_id = %(dataset_id)s
          AND t >= %(window_start)s
          AND t < %(window_end)s
          AND lon BETWEEN %(lon_min)s AND %(lon_max)s
          AND lat BETWEEN %(lat_min)s AND %(lat_max)s
    ), spans AS (
        SELECT user_id, traj_id, min(t) AS first_t, max(t) AS last_t
        FROM windowed
        GROUP BY user_id, traj_id
    ), shared AS (
        SELECT DISTINCT a.traj_id
        FROM spans AS a
        JOIN spans AS b ON b.user_id = a.user_id AND b.traj_id <> a.traj_id
                       AND b.first_t <= a.last_t AND a.first_t <= b.last_t
    ), fixes AS NOT MATERIALIZED (
        SELECT traj_id, user_id, t,
               floor(ST_X(g) / %(cell_size)s)::bigint AS cx,
               floor(ST_Y(g) / %(cell_size)s)::bigint AS cy,
               extract(epoch FROM t - %(window_start)s::timestamptz)
                   / %(interval_s)s::numeric AS at,
               -- scope 'person': the next fix of the person, whichever trajectory (ties
               -- in t: the larger traj_id owns the time points)
               extract(epoch FROM lead(t) OVER (
                   PARTITION BY CASE WHEN %(position_scope)s = 'trajectory' THEN traj_id
                                     ELSE user_id END
                   ORDER BY t, traj_id COLLATE "C")
                                  - %(window_start)s::timestamptz)
                   / %(interval_s)s::numeric AS next_at,
               (extract(epoch FROM t - %(window_start)s::timestamptz)
                + %(position_lookback_s)s::numeric) / %(interval_s)s::numeric AS stale_at
        FROM (SELECT traj_id, user_id, t, ST_Transform(geom, %(srid)s) AS g
              FROM windowed) AS p
    ), owned AS NOT MATERIALIZED (
        SELECT f.user_id, f.traj_id, f.t, f.cx, f.cy, i
        FROM fixes AS f
        CROSS JOIN LATERAL generate_series(
            ceil(f.at)::integer,
            LEAST(CASE WHEN f.next_at IS NOT NULL THEN ceil(f.next_at)::integer - 1
                       WHEN %(position_scope)s = 'person'
                       THEN ceil(extract(epoch FROM %(window_end)s::timestamptz
                                                    - %(window_start)s::timestamptz)
                                 / %(interval_s)s::numeric)::integer - 1
                       ELSE floor(f.at)::integer END,
                  floor(f.stale_at)::integer)) AS i
    )
    SELECT user_id, i, cx, cy
    FROM owned
    WHERE traj_id NOT IN (SELECT traj_id FROM shared)
    UNION ALL
    (SELECT DISTINCT ON (user_id, i) user_id, i, cx, cy
     FROM owned
     WHERE traj_id IN (SELECT traj_id FROM shared)
     ORDER BY user_id, i, t DESC, traj_id COLLATE "C" DESC)
) TO STDOUT (FORMAT csv, HEADER)

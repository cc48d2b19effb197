-- The window's fixes in trajectory order, for characteristic points (a sequential,
-- stateful scan that Python does better than SQL). Identifiers: work.
COPY (
    SELECT traj_id, user_id, extract(epoch FROM t) AS t, ST_X(geom) AS x, ST_Y(geom) AS y
    FROM {work}.points
    ORDER BY traj_id, t
) TO STDOUT (FORMAT csv)

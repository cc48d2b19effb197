-- The window's fixes in trajectory and time order, for the cells progressive
-- generalization keeps in memory (fix_cells.py) and the visits it writes from them: the
-- trajectory and the person (kept once per trajectory), the time in microseconds since
-- the epoch (exact: extract gives a numeric), the position. Identifiers: work.
COPY (
    SELECT traj_id, user_id, (extract(epoch FROM t) * 1000000)::bigint AS t_us,
           ST_X(geom) AS x, ST_Y(geom) AS y
    FROM {work}.points
    ORDER BY traj_id, t
) TO STDOUT (FORMAT csv)

-- The window's fixes in trajectory and time order, for the cells progressive
-- generalization keeps in memory (fix_cells.py) and the visits it writes from them: the
-- trajectory and the person (kept once per trajectory), the time, the position. Read
-- into Arrow by anonymizers/db/arrow_reads.py, the time as the server's microseconds
-- (no text, no numeric: extract(epoch) cost the server 5.5 s at 25M fixes). Identifiers:
-- work.
SELECT traj_id, user_id, t, ST_X(geom) AS x, ST_Y(geom) AS y
FROM {work}.points
ORDER BY traj_id, t

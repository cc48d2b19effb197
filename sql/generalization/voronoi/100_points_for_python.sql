-- The window's fixes in trajectory order, for characteristic points (a sequential,
-- stateful scan that Python does better than SQL), read into Arrow by
-- anonymizers/db/arrow_reads.py (the time as the server's microseconds: no text, no
-- numeric). Identifiers: work.
-- Ordered by the table's own time column, read along its index (an output column of the
-- same name but another value made PostgreSQL sort every trajectory again: at 25M fixes,
-- an incremental sort took the COPY from 21.8 to 28.3 s, psql).
SELECT traj_id, user_id, t, ST_X(geom) AS x, ST_Y(geom) AS y
FROM {work}.points
ORDER BY traj_id, t

-- anonymizers compare, 3/4: the raw flows on a lattice of `side` metres anchored at (x0, y0):
-- for every trajectory, its fixes in time order mapped to lattice squares, each move from
-- one square to another a flow; a flow counts the distinct persons who made it.
-- Params: x0, y0, side.
DROP TABLE IF EXISTS pg_temp.compare_raw_flows;
CREATE TEMP TABLE compare_raw_flows AS
WITH squares AS (
    SELECT traj_id, user_id, t,
           floor((ST_X(xy) - %(x0)s::float8) / %(side)s::float8)::integer AS cx,
           floor((ST_Y(xy) - %(y0)s::float8) / %(side)s::float8)::integer AS cy
    FROM compare_fixes
), moves AS (
    SELECT user_id, cx, cy,
           lag(cx) OVER w AS px, lag(cy) OVER w AS py
    FROM squares
    WINDOW w AS (PARTITION BY traj_id ORDER BY t)
)
SELECT px, py, cx, cy, count(DISTINCT user_id)::float8 AS n
FROM moves
WHERE px IS NOT NULL AND (px, py) <> (cx, cy)
GROUP BY px, py, cx, cy;
ANALYZE compare_raw_flows;

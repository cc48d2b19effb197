-- The positions of cl_verify_positions (clustering/verify/positions.sql, run first in the
-- same transaction) as numbers: each person's rank among the window's persons (its
-- user_id in "C" order, from 0), the time point in seconds since the epoch, x and y.
SELECT (dense_rank() OVER (ORDER BY user_id COLLATE "C") - 1)::int8 AS person,
       extract(epoch FROM t)::float8 AS t, x, y
FROM cl_verify_positions
ORDER BY person, t, x, y;

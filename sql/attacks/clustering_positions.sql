-- Attack suite, clustering family (TCAA): every person's distinct positions at the
-- published time points (the verifier's interpolation, cl_verify_positions of
-- verify/clustering_support.sql, run first in the same transaction), by person and time;
-- t in seconds since the epoch, as clustering_boxes.sql gives the rectangles' time points.
SELECT user_id, t, x, y
FROM (SELECT DISTINCT user_id::text AS user_id, extract(epoch FROM t)::float8 AS t, x, y
      FROM cl_verify_positions) AS p
ORDER BY user_id COLLATE "C", t, x, y;

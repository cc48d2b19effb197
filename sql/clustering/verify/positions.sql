-- The persons' positions at the published time points of a clustering release (TCAA),
-- re-derived from raw fixes (never from the anonymizer's tables): each person's position,
-- linearly interpolated between two consecutive fixes of one of their trajectories
-- (seed 002 §3, assumption 2), at every time point of a published rectangle. A fix exactly
-- at a time point is its position. Two fixes more than max_gap_seconds apart are not
-- interpolated across (NULL: every gap is; the release's parameter). Fixes as the release's
-- window reads them:
-- window_start <= t < window_end, inside the CRS's area of use, projected to srid.
-- Leaves cl_verify_positions (user_id, t, x, y) for the transaction; the verifier
-- (anonymizers/families/clustering/verifier_support.py) matches them against the rectangles.
-- Params: dataset_id, window_start, window_end, srid, lon_min, lon_max, lat_min, lat_max,
-- max_gap_seconds.
-- Identifiers: release (the schema under test).
DROP TABLE IF EXISTS pg_temp.cl_verify_positions;
CREATE TEMP TABLE cl_verify_positions ON COMMIT DROP AS
WITH fixes AS (
    SELECT user_id, traj_id, t, ST_Transform(geom, %(srid)s) AS xy
    FROM raw.points
    WHERE dataset_id = %(dataset_id)s
      AND t >= %(window_start)s::timestamptz AND t < %(window_end)s::timestamptz
      AND lon BETWEEN %(lon_min)s AND %(lon_max)s
      AND lat BETWEEN %(lat_min)s AND %(lat_max)s
), segments AS (  -- a fix before a long gap (or the last) is a segment of one instant
    SELECT user_id, t AS t0, CASE WHEN long_gap THEN t ELSE t_next END AS t1, xy AS xy0,
           CASE WHEN long_gap THEN xy ELSE xy_next END AS xy1
    FROM (SELECT user_id, t, xy, t_next, xy_next,
                 t_next IS NULL OR extract(epoch FROM t_next - t)
                     > coalesce(%(max_gap_seconds)s::float8, 'Infinity') AS long_gap
          FROM (SELECT user_id, t, xy, lead(t) OVER w AS t_next, lead(xy) OVER w AS xy_next
                FROM fixes WINDOW w AS (PARTITION BY traj_id ORDER BY t)) AS s) AS s
), time_points AS (  -- sorted: width_bucket finds a time in it by binary search
    SELECT array_agg(DISTINCT t_start ORDER BY t_start) AS t FROM {release}.group_regions
)
SELECT s.user_id, tp.t[i] AS t,
       ST_X(s.xy0) + (ST_X(s.xy1) - ST_X(s.xy0)) * f.f AS x,
       ST_Y(s.xy0) + (ST_Y(s.xy1) - ST_Y(s.xy0)) * f.f AS y
FROM segments AS s
CROSS JOIN time_points AS tp
-- The time points t0 <= t <= t1: from the first at or after t0 to the last at or before
-- t1 (width_bucket: how many time points are at or before a time). A segment holds few,
-- mostly none; no index is built (a GiST index of the segments' ranges took 113 s of the
-- 5M-fix city's 140 s).
CROSS JOIN LATERAL (SELECT width_bucket(s.t0, tp.t) AS at_or_before_t0) AS b
CROSS JOIN LATERAL generate_series(
    b.at_or_before_t0 + CASE WHEN tp.t[b.at_or_before_t0] = s.t0 THEN 0 ELSE 1 END,
    width_bucket(s.t1, tp.t)) AS i
CROSS JOIN LATERAL (
    SELECT CASE WHEN s.t1 = s.t0 THEN 0.0
                ELSE extract(epoch FROM tp.t[i] - s.t0) / extract(epoch FROM s.t1 - s.t0)
           END::float8 AS f
) AS f;
ANALYZE cl_verify_positions;

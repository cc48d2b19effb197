-- The persons' positions at the published time points of a clustering release (TCAA),
-- re-derived from raw fixes (never from the anonymizer's tables): each person's position,
-- linearly interpolated between two consecutive fixes of one of their trajectories
-- (seed 002 §3, assumption 2), at every time point of a published rectangle. A fix exactly
-- at a time point is its position. Fixes as the release's window reads them:
-- window_start <= t < window_end, inside the CRS's area of use, projected to srid.
-- Leaves cl_verify_positions (user_id, t, x, y) for the transaction; the verifier
-- (anonymizers/verifiers/clustering_support.py) matches them against the rectangles.
-- Params: dataset_id, window_start, window_end, srid, lon_min, lon_max, lat_min, lat_max.
-- Identifiers: release (the schema under test).
DROP TABLE IF EXISTS pg_temp.cl_verify_segments;
CREATE TEMP TABLE cl_verify_segments ON COMMIT DROP AS
WITH fixes AS (
    SELECT user_id, traj_id, t, ST_Transform(geom, %(srid)s) AS xy
    FROM raw.points
    WHERE dataset_id = %(dataset_id)s
      AND t >= %(window_start)s::timestamptz AND t < %(window_end)s::timestamptz
      AND lon BETWEEN %(lon_min)s AND %(lon_max)s
      AND lat BETWEEN %(lat_min)s AND %(lat_max)s
)
SELECT user_id, t AS t0, coalesce(t_next, t) AS t1, xy AS xy0, coalesce(xy_next, xy) AS xy1
FROM (SELECT user_id, t, xy,
             lead(t) OVER w AS t_next, lead(xy) OVER w AS xy_next
      FROM fixes WINDOW w AS (PARTITION BY traj_id ORDER BY t)) AS s;
CREATE INDEX ON cl_verify_segments USING gist (tstzrange(t0, t1, '[]'));
ANALYZE cl_verify_segments;

-- Positions at the published time points only: one index probe of the segments per time.
DROP TABLE IF EXISTS pg_temp.cl_verify_positions;
CREATE TEMP TABLE cl_verify_positions ON COMMIT DROP AS
SELECT s.user_id, tm.t,
       ST_X(s.xy0) + (ST_X(s.xy1) - ST_X(s.xy0)) * f.f AS x,
       ST_Y(s.xy0) + (ST_Y(s.xy1) - ST_Y(s.xy0)) * f.f AS y
FROM (SELECT DISTINCT t_start AS t FROM {release}.group_regions) AS tm
JOIN cl_verify_segments AS s ON tstzrange(s.t0, s.t1, '[]') @> tm.t
CROSS JOIN LATERAL (
    SELECT CASE WHEN s.t1 = s.t0 THEN 0.0
                ELSE extract(epoch FROM tm.t - s.t0) / extract(epoch FROM s.t1 - s.t0)
           END::float8 AS f
) AS f;
ANALYZE cl_verify_positions;

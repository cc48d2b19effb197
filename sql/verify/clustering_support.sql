-- The support of every published group of a clustering release, re-derived from raw fixes
-- (never from the anonymizer's tables): the distinct persons whose position, linearly
-- interpolated between two consecutive fixes of one of their trajectories (seed 002 §3,
-- assumption 2), lies inside the group's rectangle at every one of its time points.
-- A fix exactly at a time point is its position. Fixes as the release's window reads them:
-- window_start <= t < window_end, inside the CRS's area of use, projected to srid.
-- Returns group_id, its published n_persons and the re-derived support.
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

-- Each position against the rectangles of its time point. A region is a closed box here:
-- the same as ST_Covers for the axis-parallel rectangles that clustering_regions.sql
-- requires (a region that is not one is a violation there). Time first: the rectangles of
-- a day overlap in space so much that a spatial index finds thousands per position.
-- Kept for the transaction: the attack suite reads the groups' members from it.
DROP TABLE IF EXISTS pg_temp.cl_verify_inside;
CREATE TEMP TABLE cl_verify_inside ON COMMIT DROP AS
WITH boxes AS MATERIALIZED (
    SELECT group_id, seq, t_start AS t, ST_XMin(geom) AS x0, ST_YMin(geom) AS y0,
           ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
    FROM {release}.group_regions
)
SELECT b.group_id, b.seq, p.user_id
FROM cl_verify_positions AS p
JOIN boxes AS b ON b.t = p.t AND p.x BETWEEN b.x0 AND b.x1 AND p.y BETWEEN b.y0 AND b.y1;

WITH per_person AS (
    SELECT group_id, user_id, count(DISTINCT seq) AS n
    FROM cl_verify_inside GROUP BY group_id, user_id
),
points_of_group AS (
    SELECT group_id, count(*) AS n FROM {release}.group_regions GROUP BY group_id
),
support AS (
    SELECT pp.group_id, count(*) AS persons
    FROM per_person AS pp JOIN points_of_group AS g USING (group_id)
    WHERE pp.n = g.n
    GROUP BY pp.group_id
)
SELECT g.group_id, g.n_persons, coalesce(s.persons, 0) AS support
FROM {release}.groups AS g LEFT JOIN support AS s USING (group_id)
ORDER BY g.group_id

-- What the edges of a TCAA release's rectangles reveal: a rectangle is its group's
-- members' extent snapped outward to the lattice of snap metres, so each edge has at
-- least one member within snap metres inside it (its outermost strip: snap wide, along
-- the whole edge, at the rectangle's time point). Counts, over every edge of every
-- published rectangle, the edges whose strip holds exactly one person of the window (that
-- edge places one member to within snap metres) and fewer than k persons. Persons of the
-- window are everyone with a position at that time (pg_temp.cl_verify_positions, made in
-- this transaction by clustering/verify/positions.sql from raw fixes), not only the
-- group members. A rectangle one step wide has its strips on both sides equal to itself.
-- Params: window_start, snap (metres), k. Identifiers: build.
DROP TABLE IF EXISTS pg_temp.cl_strip_positions;
-- Time as seconds from the window start: strips and positions meet on it exactly.
CREATE TEMP TABLE cl_strip_positions ON COMMIT DROP AS
SELECT user_id, x, y, extract(epoch FROM t - %(window_start)s::timestamptz)::float8 AS s
FROM cl_verify_positions;
ANALYZE cl_strip_positions;

WITH rectangles AS (
    SELECT extract(epoch FROM t_start - %(window_start)s::timestamptz)::float8 AS s,
           ST_XMin(geom) AS x0, ST_YMin(geom) AS y0, ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
    FROM {build}.group_regions
), strips AS (  -- west, east, south, north
    SELECT row_number() OVER () AS strip, r.s, e.*
    FROM rectangles AS r
    CROSS JOIN LATERAL (VALUES
        (r.x0, r.y0, least(r.x0 + %(snap)s::float8, r.x1), r.y1),
        (greatest(r.x1 - %(snap)s::float8, r.x0), r.y0, r.x1, r.y1),
        (r.x0, r.y0, r.x1, least(r.y0 + %(snap)s::float8, r.y1)),
        (r.x0, greatest(r.y1 - %(snap)s::float8, r.y0), r.x1, r.y1)
    ) AS e (sx0, sy0, sx1, sy1)
), counted AS (
    -- A hash join on the time point, then the strip's bounds: a rectangle's time point
    -- holds a few hundred positions. (An n-D GiST index over (x, y, s) took 3 ms a probe
    -- on a T-Drive day: its boxes are flat in s and overlap badly; this join is 13 times
    -- faster there.)
    SELECT e.strip, count(DISTINCT p.user_id) AS persons
    FROM strips AS e
    LEFT JOIN cl_strip_positions AS p
           ON p.s = e.s AND p.x BETWEEN e.sx0 AND e.sx1 AND p.y BETWEEN e.sy0 AND e.sy1
    GROUP BY e.strip
)
SELECT count(*) AS edges,
       count(*) FILTER (WHERE persons = 1) AS edges_one_person,
       count(*) FILTER (WHERE persons < %(k)s) AS edges_below_k
FROM counted

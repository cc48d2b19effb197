-- What the edges of an MLA release's regions reveal: a region is, on each axis, the node
-- of a dyadic hierarchy of epsilon cells that holds its members' points (their lowest
-- common ancestor), so a region wider than one cell has at least one member's point in
-- each half: the half next to an edge is what that edge says of the members (a region
-- one cell wide says it of the whole cell). Counts, over every edge of every published
-- region, the edges whose half (or cell) holds fixes of exactly one person of the window
-- during the region's time interval, and of fewer than k (persons are counted up to k).
-- Persons of the window are
-- everyone with a fix in it ({work}.cl_fixes), not only the group members.
-- Cells are half-open ([x0, x0 + epsilon)), as the anonymizer's; so are the halves.
-- Params: window_start, epsilon (metres), k. Identifiers: work, build.
DROP TABLE IF EXISTS pg_temp.ml_strip_fixes;
CREATE TEMP TABLE ml_strip_fixes ON COMMIT DROP AS
SELECT person_index, x, y, s, ST_MakePoint(x, y, s) AS xys FROM {work}.cl_fixes;
CREATE INDEX ON ml_strip_fixes USING gist (xys gist_geometry_ops_nd);
ANALYZE ml_strip_fixes;

WITH regions AS (
    SELECT extract(epoch FROM t_start - %(window_start)s::timestamptz)::float8 AS s0,
           extract(epoch FROM t_end - %(window_start)s::timestamptz)::float8 AS s1,
           ST_XMin(geom) AS x0, ST_YMin(geom) AS y0, ST_XMax(geom) AS x1, ST_YMax(geom) AS y1
    FROM {build}.group_regions
), halves AS (
    SELECT r.*,
           CASE WHEN x1 - x0 > 1.5 * %(epsilon)s::float8 THEN (x0 + x1) / 2 ELSE x1 END AS xw,
           CASE WHEN x1 - x0 > 1.5 * %(epsilon)s::float8 THEN (x0 + x1) / 2 ELSE x0 END AS xe,
           CASE WHEN y1 - y0 > 1.5 * %(epsilon)s::float8 THEN (y0 + y1) / 2 ELSE y1 END AS ys,
           CASE WHEN y1 - y0 > 1.5 * %(epsilon)s::float8 THEN (y0 + y1) / 2 ELSE y0 END AS yn
    FROM regions AS r
), strips AS (  -- west, east, south, north: [sx0, sx1) x [sy0, sy1) during [s0, s1)
    SELECT h.s0, h.s1, e.*
    FROM halves AS h
    CROSS JOIN LATERAL (VALUES (h.x0, h.y0, h.xw, h.y1), (h.xe, h.y0, h.x1, h.y1),
                               (h.x0, h.y0, h.x1, h.ys), (h.x0, h.yn, h.x1, h.y1)
    ) AS e (sx0, sy0, sx1, sy1)
), counted AS MATERIALIZED (  -- once per strip, not once per use below
    -- Distinct persons up to k, one new person at a time (an index probe that stops at
    -- its first fix): a half holds thousands of fixes, and only 1 and below k matter.
    SELECT (WITH RECURSIVE seen (persons, n) AS (
                SELECT ARRAY[]::integer[], 0
                UNION ALL
                SELECT s.persons || f.person_index, s.n + 1
                FROM seen AS s
                CROSS JOIN LATERAL (
                    SELECT f.person_index
                    FROM ml_strip_fixes AS f
                    WHERE f.xys &&& ST_MakeLine(ST_MakePoint(e.sx0, e.sy0, e.s0),
                                                ST_MakePoint(e.sx1, e.sy1, e.s1))
                      -- the index compares single-precision boxes: the exact, half-open test
                      AND f.s >= e.s0 AND f.s < e.s1 AND f.x >= e.sx0 AND f.x < e.sx1
                      AND f.y >= e.sy0 AND f.y < e.sy1
                      AND f.person_index <> ALL (s.persons)
                    LIMIT 1
                ) AS f
                WHERE s.n < %(k)s
            )
            SELECT max(n) FROM seen) AS persons
    FROM strips AS e
)
SELECT count(*) AS edges,
       count(*) FILTER (WHERE persons = 1) AS edges_one_person,
       count(*) FILTER (WHERE persons < %(k)s) AS edges_below_k
FROM counted

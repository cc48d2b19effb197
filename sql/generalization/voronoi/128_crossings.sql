-- Crossings of the segments in {work}.recross(seg_id, traj_id, user_id, t1, t2, c1, c2,
-- line, ax, ay, dx, dy: from A = (ax, ay) to A + (dx, dy)), all segments between two
-- cells (or from or to a gap): every cell a segment runs through, other than its ends'
-- cells, entered at the interpolated time. The reference the tests hold fix_cells.py to
-- (it walks the same envelope from cell to neighbouring cell, in memory, while
-- progressive generalization merges, and writes the visits from it); the pipeline does
-- not run it. Identifiers: work.
--
-- Most segments go straight from their first cell into the neighbouring one: their ends
-- a and b share an edge, and the segment meets the bisector of the two generators, at
-- s* = (q_b - q_a) / (2 (p_b - p_a)) with p and q as below, inside that edge
-- (112_cell_edges.sql). Cells are convex, so it then runs inside a up to that point and
-- inside b after it: it crosses no cell, and needs no polygon. Only the others (recross_full:
-- ends not neighbours, the bisector met beyond the shared edge or within a millimetre of
-- its ends, an end in a gap) go through the general computation below. (5M-fix city, first
-- step of progressive generalization: see the README.)
--
-- Which cells: those whose polygon meets the segment. Cells are the outer side, so each
-- polygon is prepared once and probes the segments' GiST index (EXPLAIN ANALYZE, whole
-- T-Drive, 318k segments, 6381 cells: 6.4 s, against 15.8 s with a per-segment probe of
-- the cells' index), and the cells are shared among parallel workers: a cells table is
-- far below the size at which PostgreSQL would consider that by itself (1201 cells:
-- 3.2 s on two cores, against 4.4 s).
--
-- Where, without computing an intersection (ST_Intersection per pair cost 8 s more): the
-- cells are the Voronoi cells of their generators, so at A + s(B - A) the segment is in
-- the cell of the nearest generator. |A + s d - g|^2 - s^2 |d|^2 = q_g - 2 s p_g with
-- q_g = |A - g|^2 and p_g = d.(g - A) is a line in s, and the segment visits the cells
-- of the lower envelope of these lines in increasing order of p. A cell is entered where
-- its line crosses the previous one, s = (q_g - q_h) / (2 (p_g - p_h)), and left where
-- the next one crosses it. A cell met with no length inside it (a segment through a
-- Voronoi vertex, or polygon rounding) has an empty interval and is not a crossing: the
-- same rule as the verifier's, which intersects the published polygons with GEOS. (Its
-- neighbours' entry times then come from its line, off by no more than that rounding.)
-- Whole T-Drive: the same 668,654 crossings as intersecting polygons, times within 1 us.
-- An end in a gap (outside the clip box, c1 or c2 NULL) has no cell and no line: the first
-- cell is then entered where the segment enters the box, and the last left where it
-- leaves it (s_box_in, s_box_out: the segment clipped to {work}.clip_box, Liang-Barsky).
SET LOCAL work_mem = '256MB';
SET LOCAL min_parallel_table_scan_size = 0;
SET LOCAL parallel_setup_cost = 0;
SET LOCAL parallel_tuple_cost = 0;
DROP TABLE IF EXISTS {work}.recross_full;
CREATE TABLE {work}.recross_full AS
SELECT r.*
FROM {work}.recross AS r
LEFT JOIN {work}.cell_edges AS e
  ON e.a_id = LEAST(r.c1, r.c2) AND e.b_id = GREATEST(r.c1, r.c2)
LEFT JOIN LATERAL (  -- the bisector met at A + s (dx, dy), at t along the edge's line
    SELECT s.s, (r.ax + s.s * r.dx - e.mx) * e.ux + (r.ay + s.s * r.dy - e.my) * e.uy AS t
    FROM (SELECT ((e.gbx - r.ax) ^ 2 + (e.gby - r.ay) ^ 2 - (e.gax - r.ax) ^ 2
                  - (e.gay - r.ay) ^ 2)
                 / NULLIF(2 * (r.dx * (e.gbx - e.gax) + r.dy * (e.gby - e.gay)), 0) AS s
         ) AS s
) AS m ON true
WHERE r.c1 IS NULL OR r.c2 IS NULL OR e.a_id IS NULL
   OR NOT coalesce(m.s BETWEEN 0 AND 1 AND m.t BETWEEN e.t_min + 0.001 AND e.t_max - 0.001,
                   false);
CREATE INDEX ON {work}.recross_full USING gist (line);
ANALYZE {work}.recross_full;
INSERT INTO {work}.crossings (traj_id, user_id, t1, t2, t, cell_id)
WITH met AS (  -- the cells each segment meets, and its ends' cells (seg_id, cell, is_end)
    SELECT m.seg_id, c.cell_id, c.centroid, false AS is_end, m.ax, m.ay, m.dx, m.dy
    FROM {work}.cells AS c
    JOIN {work}.recross_full AS m
      ON ST_Intersects(c.geom, m.line)
     AND c.cell_id IS DISTINCT FROM m.c1 AND c.cell_id IS DISTINCT FROM m.c2
    UNION ALL
    SELECT r.seg_id, c.cell_id, c.centroid, true AS is_end, r.ax, r.ay, r.dx, r.dy
    FROM {work}.recross_full AS r
    CROSS JOIN LATERAL (VALUES (r.c1), (r.c2)) AS e (cell_id)
    JOIN {work}.cells AS c ON c.cell_id = e.cell_id
), lines AS (
    SELECT seg_id, cell_id, is_end,
           dx * (ST_X(centroid) - ax) + dy * (ST_Y(centroid) - ay) AS p,
           (ST_X(centroid) - ax) ^ 2 + (ST_Y(centroid) - ay) ^ 2 AS q
    FROM met
), envelope AS (
    SELECT seg_id, cell_id, is_end,
           (q - lag(q) OVER w) / NULLIF(2 * (p - lag(p) OVER w), 0) AS s_in,
           (lead(q) OVER w - q) / NULLIF(2 * (lead(p) OVER w - p), 0) AS s_out,
           lag(p) OVER w IS NULL AS first, lead(p) OVER w IS NULL AS last
    FROM lines
    WINDOW w AS (PARTITION BY seg_id ORDER BY p, cell_id)
), bounded AS (  -- after or before a gap, the box bounds the first or last cell
    SELECT r.traj_id, r.user_id, r.t1, r.t2, e.cell_id,
           CASE WHEN e.first AND r.c1 IS NULL THEN
               GREATEST(0, CASE WHEN r.dx <> 0 THEN LEAST((b.x_min - r.ax) / r.dx,
                                                          (b.x_max - r.ax) / r.dx) END,
                           CASE WHEN r.dy <> 0 THEN LEAST((b.y_min - r.ay) / r.dy,
                                                          (b.y_max - r.ay) / r.dy) END)
           ELSE e.s_in END AS s_in,
           CASE WHEN e.last AND r.c2 IS NULL THEN
               LEAST(1, CASE WHEN r.dx <> 0 THEN GREATEST((b.x_min - r.ax) / r.dx,
                                                          (b.x_max - r.ax) / r.dx) END,
                        CASE WHEN r.dy <> 0 THEN GREATEST((b.y_min - r.ay) / r.dy,
                                                          (b.y_max - r.ay) / r.dy) END)
           ELSE e.s_out END AS s_out
    FROM envelope AS e
    JOIN {work}.recross_full AS r USING (seg_id)
    CROSS JOIN {work}.clip_box AS b
    WHERE NOT e.is_end
)
SELECT traj_id, user_id, t1, t2, t1 + (t2 - t1) * LEAST(GREATEST(s_in, 0), 1), cell_id
FROM bounded
WHERE s_out > s_in;
-- Not indexed: the visits read them whole, with the fixes (050_visits.sql).
ANALYZE {work}.crossings;
RESET min_parallel_table_scan_size;  -- for the rest of the step's transaction
RESET parallel_setup_cost;
RESET parallel_tuple_cost;

-- Cell membership: each fix's cell (on a shared edge, the smallest cell id: the same rule
-- as the verifier), then the cells a segment between two fixes crosses without a fix
-- inside them, at the time the segment enters them (linear interpolation between the
-- fixes). Crossings are ordered along the segment by where it enters each cell; a segment
-- only grazing a cell (no length inside it) does not visit it.
-- A fix outside the clip box (110_voronoi_cells.sql) lies in no cell: it is a gap, kept in
-- point_cells with a NULL cell so that segments join the right neighbours, and left out of
-- memberships (the visits skip it, as the verifier skips its gap symbol). The segments to
-- and from it still visit the cells they cross inside the box (128_crossings.sql).
-- Cells are the outer side of the join, so each polygon is prepared once and probes the
-- fixes' GiST index. OFFSET 0 keeps the planner from turning the join around to feed the
-- DISTINCT ON from the (traj_id, t) index (EXPLAIN ANALYZE, whole T-Drive, 793k fixes,
-- 6381 cells: 2.7 s, against 26 s with a per-fix probe of the cells' index).
-- The segments between two fixes in different cells (or in a gap) go to recross, with
-- their ends' cells, for 128_crossings.sql; 129_segments_kept.sql then keeps them as
-- {work}.segments, where a membership update finds those running through a cell that
-- changed (125_membership_update.sql). A segment between two fixes of one cell stays
-- inside it (cells are convex), so it has no crossings until an end moves.
-- Produces {work}.point_cells, {work}.segments, {work}.crossings and the view
-- {work}.memberships (fixes + crossings). Identifiers: work.
SET LOCAL work_mem = '256MB';
CREATE INDEX IF NOT EXISTS points_geom_idx ON {work}.points USING gist (geom);

DROP VIEW IF EXISTS {work}.memberships;
DROP TABLE IF EXISTS {work}.point_cells;
CREATE TABLE {work}.point_cells AS
SELECT DISTINCT ON (p.traj_id, p.t) p.traj_id, p.user_id, p.t, p.geom, c.cell_id
FROM {work}.cells AS c
CROSS JOIN LATERAL (
    SELECT * FROM {work}.points AS p WHERE ST_Intersects(c.geom, p.geom) OFFSET 0
) AS p
ORDER BY p.traj_id, p.t, c.cell_id;
-- Gaps: the fixes no cell holds (outside the box; a hash anti-join, not a polygon test, so
-- no fix can be lost to rounding on the box's edge).
INSERT INTO {work}.point_cells (traj_id, user_id, t, geom, cell_id)
SELECT p.traj_id, p.user_id, p.t, p.geom, NULL
FROM {work}.points AS p
WHERE NOT EXISTS (SELECT 1 FROM {work}.point_cells AS pc
                  WHERE pc.traj_id = p.traj_id AND pc.t = p.t);
CREATE INDEX ON {work}.point_cells (cell_id);
CREATE INDEX ON {work}.point_cells (traj_id, t);
-- Analysed now, not whenever autovacuum gets to it: every membership update of progressive
-- generalization plans its joins on this table's statistics.
ANALYZE {work}.point_cells;

DROP TABLE IF EXISTS {work}.crossings;
CREATE TABLE {work}.crossings (
    traj_id text, user_id text, t1 timestamptz, t2 timestamptz, t timestamptz, cell_id integer
);
-- (indexed by 128_crossings.sql once filled: cheaper than maintaining them row by row)
CREATE VIEW {work}.memberships AS
SELECT traj_id, user_id, t, cell_id FROM {work}.point_cells WHERE cell_id IS NOT NULL
UNION ALL
SELECT traj_id, user_id, t, cell_id FROM {work}.crossings;

DROP TABLE IF EXISTS {work}.recross;
CREATE TABLE {work}.recross AS
SELECT row_number() OVER () AS seg_id, *,
       ST_X(ST_StartPoint(line)) AS ax, ST_Y(ST_StartPoint(line)) AS ay,
       ST_X(ST_EndPoint(line)) - ST_X(ST_StartPoint(line)) AS dx,
       ST_Y(ST_EndPoint(line)) - ST_Y(ST_StartPoint(line)) AS dy
FROM (
    SELECT traj_id, user_id, t AS t1, lead(t) OVER w AS t2,
           cell_id AS c1, lead(cell_id) OVER w AS c2,
           ST_MakeLine(geom, lead(geom) OVER w) AS line
    FROM {work}.point_cells
    WINDOW w AS (PARTITION BY traj_id ORDER BY t)
) AS s
-- Cells are convex: a segment with both ends in one cell stays inside it. A segment with
-- an end in a gap may cross cells on its way to or from the box's edge.
WHERE t2 IS NOT NULL AND (c1 IS NULL OR c1 IS DISTINCT FROM c2);

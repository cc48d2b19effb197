-- Membership after the cells changed (one step of progressive generalization), redone
-- only where they changed: {work}.regions, removed_cells and box_moved come from
-- 124_changed_cells.sql, cell_successors (the cell that took over each merged one) from
-- 115_cell_successors.sql.
-- The fixes looked at again (candidates) are those of removed cells, those in a region
-- (found through the fixes' GiST index) and, when the clip box moved, those in gaps.
-- Any other fix lies in the same cells as before (a cell that is there before and after
-- holds it after if and only if it did before, outside its region), less removed ones,
-- which did not hold it (it would be theirs, or they would hold it only on an edge with
-- a cell of smaller id, which still wins): it keeps its cell. (A city of 1M fixes, first
-- step: 14 in 100 fixes are candidates, against 72 in 100 lying in a cell whose polygon
-- changed.)
-- A candidate strictly inside the polygon of its cell's successor (its own cell, or the
-- cell that took its cell over) can lie in no other cell (the cells tile the box with
-- disjoint interiors): that is its cell, as a full membership would find. The others
-- (on an edge, on a sliver a change moved to a neighbour, in a dropped cell) are dealt
-- among all cells with the full membership's rule, and stay gaps if none holds them.
-- A segment keeps its crossings unless an end changed cell or it meets a region: it
-- meets the same cells as before, of the same generators (a cell whose generator moved
-- changed its polygon, and a removed cell's area now lies in regions). The crossings of
-- the segments looked at (recross) are recomputed by 128_crossings.sql. Fixes of removed
-- cells and segments that crossed one lie in a region too: they are also taken by id, in
-- case polygon rounding left one just outside it.
-- Identifiers: work.
SET LOCAL work_mem = '256MB';
DROP TABLE IF EXISTS {work}.candidates;
CREATE TABLE {work}.candidates AS
SELECT p.traj_id, p.t
FROM {work}.regions AS r
CROSS JOIN LATERAL (  -- regions outer, as cells in 120_membership.sql
    SELECT * FROM {work}.points AS p WHERE ST_Intersects(r.geom, p.geom) OFFSET 0
) AS p
UNION
SELECT pc.traj_id, pc.t
FROM {work}.point_cells AS pc
WHERE pc.cell_id IN (SELECT cell_id FROM {work}.removed_cells)
   OR (pc.cell_id IS NULL AND (SELECT moved FROM {work}.box_moved));

DROP TABLE IF EXISTS {work}.relocated;
CREATE TABLE {work}.relocated AS
SELECT c.traj_id, c.t, pc.geom, pc.cell_id AS old_cell,
       CASE WHEN ST_Contains(n.geom, pc.geom) THEN n.cell_id END AS cell_id
FROM {work}.candidates AS c
JOIN {work}.point_cells AS pc USING (traj_id, t)
LEFT JOIN {work}.cell_successors AS s ON s.old_id = pc.cell_id
LEFT JOIN {work}.cells AS n ON n.cell_id = coalesce(s.new_id, pc.cell_id);
CREATE INDEX ON {work}.relocated USING gist (geom) WHERE cell_id IS NULL;
ANALYZE {work}.relocated;
UPDATE {work}.relocated AS r SET cell_id = d.cell_id
FROM (
    SELECT DISTINCT ON (m.traj_id, m.t) m.traj_id, m.t, c.cell_id
    FROM {work}.cells AS c
    CROSS JOIN LATERAL (  -- cells outer, as in 120_membership.sql
        SELECT * FROM {work}.relocated AS m
        WHERE m.cell_id IS NULL AND ST_Intersects(c.geom, m.geom) OFFSET 0
    ) AS m
    ORDER BY m.traj_id, m.t, c.cell_id
) AS d
WHERE r.traj_id = d.traj_id AND r.t = d.t;

DROP TABLE IF EXISTS {work}.moved_points;
CREATE TABLE {work}.moved_points AS
WITH moved AS (
    UPDATE {work}.point_cells AS pc SET cell_id = r.cell_id
    FROM {work}.relocated AS r
    WHERE pc.traj_id = r.traj_id AND pc.t = r.t AND r.cell_id IS DISTINCT FROM r.old_cell
    RETURNING pc.traj_id, pc.t
)
SELECT * FROM moved;
ANALYZE {work}.moved_points;

-- The segments to look at again (traj_id, t1): those in {work}.segments meeting a region
-- (regions outer, probing its GiST index), those with an end that changed cell (or, when
-- the box moved, lies in a gap: 128_crossings.sql bounds them by the box), and those that
-- crossed a removed cell. {work}.segments holds every segment that ran between two cells
-- at some point since the last full membership (129_segments_kept.sql,
-- 129_segments_added.sql); any other segment has had both ends in one cell all along,
-- and no crossings. The segments at a moved end are built from its neighbouring fixes.
DROP TABLE IF EXISTS {work}.moved_ends;
CREATE TABLE {work}.moved_ends AS
WITH ends AS (
    SELECT traj_id, t FROM {work}.moved_points
    UNION ALL
    SELECT traj_id, t FROM {work}.point_cells
    WHERE cell_id IS NULL AND (SELECT moved FROM {work}.box_moved)
), fixes AS (
    SELECT pc.traj_id, pc.user_id, pc.t, pc.geom
    FROM ends AS e
    JOIN {work}.point_cells AS pc USING (traj_id, t)
), both_sides AS (
    SELECT f.traj_id, f.user_id, f.t AS t1, n.t AS t2, ST_MakeLine(f.geom, n.geom) AS line
    FROM fixes AS f
    CROSS JOIN LATERAL (
        SELECT pc.t, pc.geom FROM {work}.point_cells AS pc
        WHERE pc.traj_id = f.traj_id AND pc.t > f.t ORDER BY pc.t LIMIT 1
    ) AS n
    UNION ALL
    SELECT f.traj_id, f.user_id, p.t AS t1, f.t AS t2, ST_MakeLine(p.geom, f.geom) AS line
    FROM fixes AS f
    CROSS JOIN LATERAL (
        SELECT pc.t, pc.geom FROM {work}.point_cells AS pc
        WHERE pc.traj_id = f.traj_id AND pc.t < f.t ORDER BY pc.t DESC LIMIT 1
    ) AS p
)
SELECT DISTINCT ON (traj_id, t1) * FROM both_sides ORDER BY traj_id, t1;

DROP TABLE IF EXISTS {work}.rerouted;
CREATE TABLE {work}.rerouted AS
SELECT traj_id, user_id, t1, t2, line FROM {work}.moved_ends
UNION ALL
SELECT s.traj_id, s.user_id, s.t1, s.t2, s.line
FROM (
    SELECT s.traj_id, s.t1
    FROM {work}.regions AS r
    CROSS JOIN LATERAL (
        SELECT traj_id, t1 FROM {work}.segments AS s
        WHERE ST_Intersects(r.geom, s.line) OFFSET 0
    ) AS s
    UNION
    SELECT traj_id, t1 FROM {work}.crossings
    WHERE cell_id IN (SELECT cell_id FROM {work}.removed_cells)
    EXCEPT
    SELECT traj_id, t1 FROM {work}.moved_ends
) AS k
JOIN {work}.segments AS s ON s.traj_id = k.traj_id AND s.t1 = k.t1;
ANALYZE {work}.rerouted;

DELETE FROM {work}.crossings AS x
USING {work}.rerouted AS r
WHERE x.traj_id = r.traj_id AND x.t1 = r.t1;

-- As in 120_membership.sql: only segments whose ends lie in different cells, or in a gap,
-- can cross a cell.
DROP TABLE IF EXISTS {work}.recross;
CREATE TABLE {work}.recross AS
SELECT row_number() OVER () AS seg_id, r.traj_id, r.user_id, r.t1, r.t2,
       a.cell_id AS c1, b.cell_id AS c2, r.line,
       ST_X(ST_StartPoint(r.line)) AS ax, ST_Y(ST_StartPoint(r.line)) AS ay,
       ST_X(ST_EndPoint(r.line)) - ST_X(ST_StartPoint(r.line)) AS dx,
       ST_Y(ST_EndPoint(r.line)) - ST_Y(ST_StartPoint(r.line)) AS dy
FROM {work}.rerouted AS r
JOIN {work}.point_cells AS a ON a.traj_id = r.traj_id AND a.t = r.t1
JOIN {work}.point_cells AS b ON b.traj_id = r.traj_id AND b.t = r.t2
WHERE a.cell_id IS NULL OR a.cell_id IS DISTINCT FROM b.cell_id;

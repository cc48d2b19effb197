-- Membership after the cells changed (one step of progressive generalization), redone
-- only where needed; {work}.changed_cells and stale_cells come from 124_changed_cells.sql,
-- cell_successors from 115_cell_successors.sql.
-- Unchanged cells have identical polygons, so a fix that was in one stays there. A fix of
-- a stale cell is first tested against its old cell's successor (the same cell, changed,
-- or the merged cell that took it over): strictly inside that polygon, it can lie in no
-- other cell (the cells tile the box with disjoint interiors), so that is its cell, as a
-- full membership would find; only the fixes on its edge or outside it (the slivers a
-- change moved to a neighbour, the fixes of a dropped cell) are re-dealt among the
-- changed cells. (On a T-Drive-like city of 1M fixes, most fixes of a stale cell stay:
-- one polygon test each instead of an index probe, a sort, a delete and an insert.)
-- A crossing (segment, cell) stays valid unless the cell changed or an end of the segment
-- moved; the crossings of every affected segment are recomputed by 128_crossings.sql.
-- When the clip box moved (it follows the generators; {work}.box_moved), the fixes in
-- gaps (NULL cell) are re-dealt too, and stay gaps if no cell holds them now.
-- Identifiers: work.
SET LOCAL work_mem = '256MB';
DROP TABLE IF EXISTS {work}.stale_points;
CREATE TABLE {work}.stale_points AS
SELECT pc.traj_id, pc.t, pc.cell_id AS old_cell, n.cell_id AS successor,
       coalesce(ST_Contains(n.geom, pc.geom), false) AS inside
FROM {work}.point_cells AS pc
LEFT JOIN {work}.cell_successors AS s ON s.old_id = pc.cell_id
LEFT JOIN {work}.cells AS n ON n.cell_id = coalesce(s.new_id, pc.cell_id)
WHERE pc.cell_id IN (SELECT cell_id FROM {work}.stale_cells)
   OR (pc.cell_id IS NULL AND (SELECT moved FROM {work}.box_moved));
CREATE INDEX ON {work}.stale_points (traj_id, t);
ANALYZE {work}.stale_points;

-- moved_points: the fixes whose cell changes (relabelled to their successor, or re-dealt).
DROP TABLE IF EXISTS {work}.moved_points;
CREATE TABLE {work}.moved_points AS
WITH moved AS (
    DELETE FROM {work}.point_cells AS pc
    USING {work}.stale_points AS s
    WHERE pc.traj_id = s.traj_id AND pc.t = s.t
      AND NOT (s.inside AND s.successor = s.old_cell)
    RETURNING pc.traj_id, pc.user_id, pc.t, pc.geom,
              CASE WHEN s.inside THEN s.successor END AS successor
)
SELECT * FROM moved;
CREATE INDEX ON {work}.moved_points USING gist (geom) WHERE successor IS NULL;
CREATE INDEX ON {work}.moved_points (traj_id, t);
ANALYZE {work}.moved_points;

INSERT INTO {work}.point_cells (traj_id, user_id, t, geom, cell_id)
SELECT traj_id, user_id, t, geom, successor FROM {work}.moved_points
WHERE successor IS NOT NULL;
INSERT INTO {work}.point_cells (traj_id, user_id, t, geom, cell_id)
SELECT DISTINCT ON (m.traj_id, m.t) m.traj_id, m.user_id, m.t, m.geom, c.cell_id
FROM {work}.changed_cells AS c
CROSS JOIN LATERAL (  -- cells outer, as in 120_membership.sql
    SELECT * FROM {work}.moved_points AS m
    WHERE m.successor IS NULL AND ST_Intersects(c.geom, m.geom) OFFSET 0
) AS m
ORDER BY m.traj_id, m.t, c.cell_id;
-- A fix no changed cell claims: rounding on an edge (search all cells), or a gap (none).
INSERT INTO {work}.point_cells (traj_id, user_id, t, geom, cell_id)
SELECT m.traj_id, m.user_id, m.t, m.geom,
       (SELECT min(c.cell_id) FROM {work}.cells AS c WHERE ST_Intersects(c.geom, m.geom))
FROM {work}.moved_points AS m
WHERE m.successor IS NULL
  AND NOT EXISTS (SELECT 1 FROM {work}.point_cells AS pc
                  WHERE pc.traj_id = m.traj_id AND pc.t = m.t);

-- Segments whose crossings must be recomputed go to recross: those with an end that moved
-- or lies in a changed cell, and those that crossed a stale cell. No other segment can
-- meet a changed cell: the changed cells cover the area of the stale ones, so a segment
-- running through a changed cell ran through a stale one, and that was a crossing (or an
-- end). This replaces a polygon test per segment (17.6 s of an update's 28 s on a city of
-- 1M fixes) by lookups of ids. (Where the box grew, the changed cells cover more: but a
-- segment reaching there has an end outside the old box, a gap, which moved with the
-- box.) Only trajectories with a fix of a stale cell or a crossing of one are read.
-- (Whole trajectories are windowed: filtering fixes first would join wrong neighbours.)
DROP TABLE IF EXISTS {work}.recross;
CREATE TABLE {work}.recross AS
WITH affected AS (
    SELECT traj_id FROM {work}.stale_points
    UNION
    SELECT traj_id FROM {work}.crossings
    WHERE cell_id IN (SELECT cell_id FROM {work}.stale_cells)
), segments AS (
    SELECT * FROM (
        SELECT traj_id, user_id, t AS t1, lead(t) OVER w AS t2,
               cell_id AS c1, lead(cell_id) OVER w AS c2,
               ST_MakeLine(geom, lead(geom) OVER w) AS line
        FROM {work}.point_cells
        WHERE traj_id IN (SELECT traj_id FROM affected)
        WINDOW w AS (PARTITION BY traj_id ORDER BY t)
    ) AS s
    WHERE t2 IS NOT NULL AND (c1 IS NULL OR c1 IS DISTINCT FROM c2)
)
SELECT row_number() OVER () AS seg_id, s.*,
       ST_X(ST_StartPoint(line)) AS ax, ST_Y(ST_StartPoint(line)) AS ay,
       ST_X(ST_EndPoint(line)) - ST_X(ST_StartPoint(line)) AS dx,
       ST_Y(ST_EndPoint(line)) - ST_Y(ST_StartPoint(line)) AS dy
FROM segments AS s
WHERE EXISTS (SELECT 1 FROM {work}.moved_points AS m
              WHERE m.traj_id = s.traj_id AND m.t IN (s.t1, s.t2))
   OR s.c1 IN (SELECT cell_id FROM {work}.changed_cells)
   OR s.c2 IN (SELECT cell_id FROM {work}.changed_cells)
   OR EXISTS (SELECT 1 FROM {work}.crossings AS x
              WHERE x.traj_id = s.traj_id AND x.t1 = s.t1
                AND x.cell_id IN (SELECT cell_id FROM {work}.stale_cells));

DELETE FROM {work}.crossings AS x
WHERE x.cell_id IN (SELECT cell_id FROM {work}.stale_cells)
   OR EXISTS (SELECT 1 FROM {work}.moved_points AS m
              WHERE m.traj_id = x.traj_id AND m.t IN (x.t1, x.t2))
   OR EXISTS (SELECT 1 FROM {work}.recross AS s WHERE s.traj_id = x.traj_id AND s.t1 = x.t1);

-- Membership after the cells changed (one step of progressive generalization), redone
-- only where needed; {work}.changed_cells and stale_cells come from 124_changed_cells.sql.
-- Unchanged cells have identical polygons, so a fix that was in one stays there; fixes
-- of stale cells are re-dealt among the changed cells. A crossing (segment, cell) stays
-- valid unless the cell changed or an end of the segment moved; the crossings of every
-- affected segment are recomputed by 128_crossings.sql. When the clip box moved (it
-- follows the generators; {work}.box_moved), the fixes in gaps (NULL cell) are re-dealt
-- too, and stay gaps if no cell holds them now. Identifiers: work.
SET LOCAL work_mem = '256MB';
DROP TABLE IF EXISTS {work}.moved_points;
CREATE TABLE {work}.moved_points AS
WITH moved AS (
    DELETE FROM {work}.point_cells
    WHERE cell_id IN (SELECT cell_id FROM {work}.stale_cells)
       OR (cell_id IS NULL AND (SELECT moved FROM {work}.box_moved))
    RETURNING traj_id, user_id, t, geom
)
SELECT * FROM moved;
CREATE INDEX ON {work}.moved_points USING gist (geom);
CREATE INDEX ON {work}.moved_points (traj_id, t);
ANALYZE {work}.moved_points;

INSERT INTO {work}.point_cells (traj_id, user_id, t, geom, cell_id)
SELECT DISTINCT ON (m.traj_id, m.t) m.traj_id, m.user_id, m.t, m.geom, c.cell_id
FROM {work}.changed_cells AS c
CROSS JOIN LATERAL (  -- cells outer, as in 120_membership.sql
    SELECT * FROM {work}.moved_points AS m WHERE ST_Intersects(c.geom, m.geom) OFFSET 0
) AS m
ORDER BY m.traj_id, m.t, c.cell_id;
-- A fix no changed cell claims: rounding on an edge (search all cells), or a gap (none).
INSERT INTO {work}.point_cells (traj_id, user_id, t, geom, cell_id)
SELECT m.traj_id, m.user_id, m.t, m.geom,
       (SELECT min(c.cell_id) FROM {work}.cells AS c WHERE ST_Intersects(c.geom, m.geom))
FROM {work}.moved_points AS m
WHERE NOT EXISTS (SELECT 1 FROM {work}.point_cells AS pc
                  WHERE pc.traj_id = m.traj_id AND pc.t = m.t);

-- Segments whose crossings must be recomputed go to recross. Only trajectories with a
-- moved fix or a crossing of a stale cell can have one: the changed cells cover the area
-- of the stale ones, so a segment meeting a changed cell met a stale one. (Where the box
-- grew, the changed cells cover more: but a segment reaching there has an end outside the
-- old box, a gap, which moved with the box.)
-- (Whole trajectories are windowed: filtering fixes first would join wrong neighbours.)
DROP TABLE IF EXISTS {work}.recross;
CREATE TABLE {work}.recross AS
WITH affected AS (
    SELECT traj_id FROM {work}.moved_points
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
   OR EXISTS (SELECT 1 FROM {work}.changed_cells AS c WHERE ST_Intersects(c.geom, s.line))
   OR EXISTS (SELECT 1 FROM {work}.crossings AS x
              WHERE x.traj_id = s.traj_id AND x.t1 = s.t1
                AND x.cell_id IN (SELECT cell_id FROM {work}.stale_cells));

DELETE FROM {work}.crossings AS x
WHERE x.cell_id IN (SELECT cell_id FROM {work}.stale_cells)
   OR EXISTS (SELECT 1 FROM {work}.moved_points AS m
              WHERE m.traj_id = x.traj_id AND m.t IN (x.t1, x.t2))
   OR EXISTS (SELECT 1 FROM {work}.recross AS s WHERE s.traj_id = x.traj_id AND s.t1 = x.t1);

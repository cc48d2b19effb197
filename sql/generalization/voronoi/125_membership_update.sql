-- Membership after the cells changed (one step of progressive generalization), redone
-- only where they changed: {work}.regions, removed_cells and box_moved come from
-- 124_changed_cells.sql, cell_successors (the cell that took over each merged one) from
-- 115_cell_successors.sql, membership_lattice from 120_membership.sql.
-- The fixes looked at again (candidates) are those of removed cells, those in a lattice
-- square that meets a region and, when the clip box moved, those in gaps. Any other fix
-- lies in the same cells as before (a cell that is there before and after holds it after
-- if and only if it did before, outside its region), less removed ones, which did not
-- hold it (it would be theirs, or they would hold it only on an edge with a cell of
-- smaller id, which still wins): it keeps its cell. (A city of 1M fixes, first step: 14 in
-- 100 fixes lie in a region, against 72 in 100 lying in a cell whose polygon changed.)
-- A fix finds its square by arithmetic in one pass over point_cells, as in
-- 120_membership.sql; the squares, enlarged by a millimetre, are tested against the
-- regions, so a fix in a region always lies in a square that meets one. (25M-fix city,
-- first step: the regions probing the fixes' GiST index, then a union with the fixes of
-- removed cells sorted by (trajectory, time), took 96.8 s: the index's hits are spread
-- over the whole points table.)
-- A candidate strictly inside the polygon of its cell's successor (its own cell, or the
-- cell that took its cell over) can lie in no other cell (the cells tile the box with
-- disjoint interiors): that is its cell, as a full membership would find. The others
-- (on an edge, on a sliver a change moved to a neighbour, in a dropped cell) are dealt
-- among all cells with the full membership's rule, and stay gaps if none holds them.
-- The crossings of the segments looked at (recross, see below) are recomputed by
-- 128_crossings.sql.
-- Identifiers: work.
SET LOCAL work_mem = '256MB';
DROP TABLE IF EXISTS pg_temp.region_squares;
CREATE TEMP TABLE region_squares ON COMMIT DROP AS
SELECT DISTINCT i, j
FROM {work}.regions AS r
CROSS JOIN {work}.membership_lattice AS l
CROSS JOIN LATERAL generate_series(floor((ST_XMin(r.geom) - l.x_min) / l.side)::integer,
                                   floor((ST_XMax(r.geom) - l.x_min) / l.side)::integer) AS i
CROSS JOIN LATERAL generate_series(floor((ST_YMin(r.geom) - l.y_min) / l.side)::integer,
                                   floor((ST_YMax(r.geom) - l.y_min) / l.side)::integer) AS j
WHERE ST_Intersects(r.geom, ST_MakeEnvelope(
    l.x_min + i * l.side - 0.001, l.y_min + j * l.side - 0.001,
    l.x_min + (i + 1) * l.side + 0.001, l.y_min + (j + 1) * l.side + 0.001, l.srid));
ANALYZE region_squares;

-- One sequential pass over point_cells, the lattice's numbers as constants (joined, or
-- with the candidates joined to the cells at once, the plan read point_cells through its
-- cell index: in cell order, all over the table). A square is looked up by its two
-- numbers: as one bigint, i * 2^32 + j, PostgreSQL's hash of a bigint folds the two
-- halves into i XOR j, which put the squares of a 5M-fix city in a thousand buckets (26 s
-- for the pass, against 1.7 s).
DROP TABLE IF EXISTS {work}.candidates;
CREATE TABLE {work}.candidates AS
SELECT pc.traj_id, pc.t, pc.geom, pc.cell_id AS old_cell
FROM {work}.point_cells AS pc
WHERE (floor((ST_X(pc.geom) - (SELECT x_min FROM {work}.membership_lattice))
             / (SELECT side FROM {work}.membership_lattice))::integer,
       floor((ST_Y(pc.geom) - (SELECT y_min FROM {work}.membership_lattice))
             / (SELECT side FROM {work}.membership_lattice))::integer)
          IN (SELECT i, j FROM region_squares)
   OR pc.cell_id IN (SELECT cell_id FROM {work}.removed_cells)
   OR (pc.cell_id IS NULL AND (SELECT moved FROM {work}.box_moved));
ANALYZE {work}.candidates;

DROP TABLE IF EXISTS {work}.relocated;
CREATE TABLE {work}.relocated AS
SELECT c.traj_id, c.t, c.geom, c.old_cell,
       CASE WHEN ST_Contains(n.geom, c.geom) THEN n.cell_id END AS cell_id
FROM {work}.candidates AS c
LEFT JOIN {work}.cell_successors AS s ON s.old_id = c.old_cell
LEFT JOIN {work}.cells AS n ON n.cell_id = coalesce(s.new_id, c.old_cell);
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

-- The segments to look at again: those at a fix that changed cell (or, when the
-- box moved, lies in a gap: 128_crossings.sql bounds such a segment by the box), rebuilt
-- from the fix's neighbours with their ends' cells, and those in {work}.segments that
-- run through a cell that changed or was removed: an end's cell or a crossed one. Any
-- other segment keeps its crossings: it lies in the cells it runs through (its ends'
-- cells and its crossings), whose polygons and generators are what they were, so no
-- other cell can hold a stretch of it. {work}.segments holds every segment whose ends lie
-- in two cells or in a gap, with their cells (129_segments_kept.sql, kept so by
-- 129_segments_changed.sql); one whose ends lie in one cell stays inside it (cells are
-- convex) and has no crossings. Most segments looked at go straight into the neighbouring
-- cell and cost 128_crossings.sql no polygon.
DROP TABLE IF EXISTS {work}.moved_ends;
CREATE TABLE {work}.moved_ends AS
WITH ends AS (
    SELECT traj_id, t FROM {work}.moved_points
    UNION ALL
    SELECT traj_id, t FROM {work}.point_cells
    WHERE cell_id IS NULL AND (SELECT moved FROM {work}.box_moved)
), fixes AS (
    SELECT pc.traj_id, pc.user_id, pc.t, pc.geom, pc.cell_id
    FROM ends AS e
    JOIN {work}.point_cells AS pc USING (traj_id, t)
), both_sides AS (
    SELECT f.traj_id, f.user_id, f.t AS t1, n.t AS t2, f.cell_id AS c1, n.cell_id AS c2,
           ST_MakeLine(f.geom, n.geom) AS line
    FROM fixes AS f
    CROSS JOIN LATERAL (
        SELECT pc.t, pc.geom, pc.cell_id FROM {work}.point_cells AS pc
        WHERE pc.traj_id = f.traj_id AND pc.t > f.t ORDER BY pc.t LIMIT 1
    ) AS n
    UNION ALL
    SELECT f.traj_id, f.user_id, p.t AS t1, f.t AS t2, p.cell_id AS c1, f.cell_id AS c2,
           ST_MakeLine(p.geom, f.geom) AS line
    FROM fixes AS f
    CROSS JOIN LATERAL (
        SELECT pc.t, pc.geom, pc.cell_id FROM {work}.point_cells AS pc
        WHERE pc.traj_id = f.traj_id AND pc.t < f.t ORDER BY pc.t DESC LIMIT 1
    ) AS p
)
SELECT DISTINCT ON (traj_id, t1) * FROM both_sides ORDER BY traj_id, t1;
ANALYZE {work}.moved_ends;

DROP TABLE IF EXISTS {work}.affected_cells;
CREATE TABLE {work}.affected_cells AS
SELECT cell_id FROM {work}.changed_cells
UNION
SELECT cell_id FROM {work}.removed_cells;

-- The segments to cross again (recross): the rebuilt ones whose ends lie in two cells or
-- in a gap (as in 120_membership.sql: only those can cross a cell), and the kept ones
-- through an affected cell. The kept ones in one pass over the segments, the crossed cells
-- and the rebuilt ones as hashed lookups (5M-fix city, first step, 1,834,857 segments: 2.2
-- s, against 7.8-8.6 s as a union and difference of (trajectory, time) keys joined back
-- to the segments; the same segments).
DROP TABLE IF EXISTS {work}.recross;
CREATE TABLE {work}.recross AS
SELECT row_number() OVER () AS seg_id, *
FROM (
    SELECT traj_id, user_id, t1, t2, c1, c2, line,
           ST_X(ST_StartPoint(line)) AS ax, ST_Y(ST_StartPoint(line)) AS ay,
           ST_X(ST_EndPoint(line)) - ST_X(ST_StartPoint(line)) AS dx,
           ST_Y(ST_EndPoint(line)) - ST_Y(ST_StartPoint(line)) AS dy
    FROM {work}.moved_ends
    WHERE c1 IS NULL OR c1 IS DISTINCT FROM c2
    UNION ALL
    SELECT s.traj_id, s.user_id, s.t1, s.t2, s.c1, s.c2, s.line, s.ax, s.ay, s.dx, s.dy
    FROM {work}.segments AS s
    WHERE (s.c1 IN (SELECT cell_id FROM {work}.affected_cells)
           OR s.c2 IN (SELECT cell_id FROM {work}.affected_cells)
           OR (s.traj_id, s.t1) IN (SELECT x.traj_id, x.t1 FROM {work}.crossings AS x
                                    WHERE x.cell_id IN (SELECT cell_id FROM {work}.affected_cells)))
      AND NOT EXISTS (SELECT 1 FROM {work}.moved_ends AS m
                      WHERE m.traj_id = s.traj_id AND m.t1 = s.t1)
) AS r;
ANALYZE {work}.recross;

-- The crossings of every segment looked at go (recross, and the rebuilt segments now
-- inside one cell); the trajectories that lost one are kept for
-- 142_changed_trajectories.sql.
DROP TABLE IF EXISTS {work}.uncrossed;
CREATE TABLE {work}.uncrossed AS
WITH deleted AS (
    DELETE FROM {work}.crossings AS x
    USING (SELECT traj_id, t1 FROM {work}.moved_ends
           UNION ALL
           SELECT traj_id, t1 FROM {work}.recross) AS r
    WHERE x.traj_id = r.traj_id AND x.t1 = r.t1
    RETURNING x.traj_id
)
SELECT DISTINCT traj_id FROM deleted;

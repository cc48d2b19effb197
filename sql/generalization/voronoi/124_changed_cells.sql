-- What a step of progressive generalization changed, for 125_membership_update.sql and
-- the statistics (131_cell_statistics_update.sql). Identifiers: work.
-- changed_cells: the cells whose polygon differs from their previous one (ST_Equals is
-- exact, so any numerical difference counts as a change: that costs time, never
-- correctness), or that are new. A merge keeps the id of one of its two cells
-- (tessellation._apply): that cell changed, the other one is removed. removed_cells: the
-- previous cells that are gone (merged into another, or dropped). regions: where the
-- cells that are there before and after changed, as the symmetric difference of their
-- new and previous polygons (what they lost to a neighbour or gained from one), and the
-- whole polygon of a new cell (generators that snapped onto one lattice point get a new
-- id). Wherever the tessellation changed, it did in a region or in a removed cell:
-- 125_membership_update.sql relies on it.
-- box_moved: the clip box follows the generators; when it moved, the fixes in gaps
-- (outside it, NULL cell) and the segments ending in one are looked at again too, as
-- the crossing step bounds such a segment by the box.
DROP TABLE IF EXISTS {work}.box_moved;
CREATE TABLE {work}.box_moved AS
SELECT (b.x_min, b.y_min, b.x_max, b.y_max) IS DISTINCT FROM
       (o.x_min, o.y_min, o.x_max, o.y_max) AS moved
FROM {work}.clip_box AS b
LEFT JOIN {work}.clip_box_prev AS o ON true;

DROP TABLE IF EXISTS {work}.changed_cells;
CREATE TABLE {work}.changed_cells AS
SELECT c.cell_id, c.geom FROM {work}.cells AS c LEFT JOIN {work}.cells_prev AS o USING (cell_id)
WHERE o.cell_id IS NULL OR NOT ST_Equals(c.geom, o.geom);

DROP TABLE IF EXISTS {work}.removed_cells;
CREATE TABLE {work}.removed_cells AS
SELECT o.cell_id FROM {work}.cells_prev AS o
WHERE NOT EXISTS (SELECT 1 FROM {work}.cells AS c WHERE c.cell_id = o.cell_id);

-- A region is kept in pieces of at most 64 vertices (ST_Subdivide), each with a tight
-- bounding box: a region is thin slivers along moved edges, whose own box holds about
-- five times its area, and every fix in the box is tested against the polygon. (5M-fix
-- city, first step, the search alone: 6.3-7.2 s against 9.3-9.8 s whole; the statement
-- making the candidates, in a profile of the whole update: 8.9 s against 9.2 s.)
DROP TABLE IF EXISTS {work}.regions;
CREATE TABLE {work}.regions AS
SELECT cell_id, ST_Subdivide(geom, 64) AS geom
FROM (
    SELECT c.cell_id, coalesce(ST_SymDifference(c.geom, o.geom), c.geom) AS geom
    FROM {work}.cells AS c
    LEFT JOIN {work}.cells_prev AS o USING (cell_id)
    WHERE o.cell_id IS NULL OR NOT ST_Equals(c.geom, o.geom)
) AS r
WHERE NOT ST_IsEmpty(geom);
ANALYZE {work}.regions;

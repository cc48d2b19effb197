-- Which cells a step of progressive generalization changed (their polygons differ from
-- cells_prev: ST_Equals is exact, so any numerical difference counts as a change, which
-- costs time, never correctness), and the share of fixes lying in stale cells: the
-- caller redoes membership from scratch when that share is large, since an update then
-- tests and re-crosses most fixes at a higher cost per fix than a full membership
-- (tessellation.FULL_MEMBERSHIP_SHARE). The fixes in gaps (outside the clip
-- box, NULL cell) move too when the box moved (it follows the generators, and may have
-- grown over them): box_moved. Identifiers: work.
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
CREATE INDEX ON {work}.changed_cells USING gist (geom);

DROP TABLE IF EXISTS {work}.stale_cells;
CREATE TABLE {work}.stale_cells AS
SELECT o.cell_id, o.geom FROM {work}.cells_prev AS o LEFT JOIN {work}.cells AS c USING (cell_id)
WHERE c.cell_id IS NULL OR NOT ST_Equals(c.geom, o.geom);

SELECT coalesce(avg((cell_id IN (SELECT cell_id FROM {work}.stale_cells)
                     OR (cell_id IS NULL AND (SELECT moved FROM {work}.box_moved)))::integer),
                0) AS changed_share
FROM {work}.point_cells;

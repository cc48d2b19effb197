-- What a step of progressive generalization changed (110_voronoi_cells.sql keeps the
-- previous cells and box): the ids of the previous cells whose polygon differs from the
-- cell of that id now (ST_Equals is exact, so any numerical difference counts as a
-- change: that costs time, never correctness) or that are gone, and whether the clip box
-- moved. Only the fixes of those cells can change cell (a fix's cell is its nearest
-- generator, and a cell whose polygon is the same holds the same fixes), and the gaps
-- when the box moved (fix_cells.FixCells.update). A merge keeps the id of one of its two
-- cells (tessellation._apply): that cell changed, the other one is gone.
-- Returns one row: changed (integer[]), box_moved. Identifiers: work.
SELECT ARRAY(
           SELECT o.cell_id
           FROM {work}.cells_prev AS o
           LEFT JOIN {work}.cells AS c USING (cell_id)
           WHERE c.cell_id IS NULL OR NOT ST_Equals(c.geom, o.geom)
           ORDER BY o.cell_id
       ) AS changed,
       (SELECT (b.x_min, b.y_min, b.x_max, b.y_max) IS DISTINCT FROM
               (o.x_min, o.y_min, o.x_max, o.y_max)
        FROM {work}.clip_box AS b
        LEFT JOIN {work}.clip_box_prev AS o ON true) AS box_moved;

-- The current tessellation as fix_cells.Tessellation holds it: each generator (by cell
-- id, ascending) and the clip box, on every row. The pairs of cells sharing an edge come
-- from 140_neighbour_pairs.sql. Identifiers: work.
SELECT c.cell_id, ST_X(c.centroid) AS x, ST_Y(c.centroid) AS y,
       b.x_min, b.y_min, b.x_max, b.y_max
FROM {work}.cells AS c
CROSS JOIN {work}.clip_box AS b
ORDER BY c.cell_id;

-- Every fix of the window in trajectory order, with its cell, that cell's centroid and its
-- published cell id (empty when the cell is not published), for displacement, the original
-- routes and the re-identification attack. {fixes} is the table of the fixes' cells:
-- {work}.point_cells (Voronoi methods: memberships there also hold crossed cells) or
-- {work}.memberships (grid: fixes only). Identifiers: work, fixes (schema, table).
COPY (
    SELECT p.traj_id, p.user_id, ST_X(p.geom), ST_Y(p.geom),
           f.cell_id, ST_X(c.centroid), ST_Y(c.centroid), m.release_cell_id
    FROM {work}.points AS p
    LEFT JOIN {fixes} AS f USING (traj_id, t)
    LEFT JOIN {work}.cells AS c ON c.cell_id = f.cell_id
    LEFT JOIN {work}.cell_map AS m ON m.cell_id = f.cell_id
    ORDER BY p.traj_id, p.t
) TO STDOUT (FORMAT csv)

-- The grid's fixes with their cell and position, for 040_displacement.sql: the grid keeps
-- its fixes' cells in {work}.memberships, without their positions, which are in
-- {work}.points (the Voronoi methods' point_cells holds both). Temporary: it lives as long
-- as the metrics step's session. Identifiers: work.
CREATE OR REPLACE TEMP VIEW located_grid_fixes AS
SELECT f.cell_id, p.geom
FROM {work}.points AS p
JOIN {work}.memberships AS f USING (traj_id, t);

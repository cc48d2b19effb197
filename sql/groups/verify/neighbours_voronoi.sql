-- Verifier of trajectory groups (seed 004), places=voronoi: the neighbours of each cell are
-- the cells of the same release that touch it (tgv_cells, fixes_voronoi.sql).
DROP TABLE IF EXISTS pg_temp.tgv_neighbours;
CREATE TEMP TABLE tgv_neighbours ON COMMIT DROP AS
SELECT a.place AS a, b.place AS b
FROM tgv_cells AS a
JOIN tgv_cells AS b ON a.place <> b.place AND ST_Touches(a.geom, b.geom);
CREATE INDEX ON tgv_neighbours (a);

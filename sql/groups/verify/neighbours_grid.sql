-- Verifier of trajectory groups (seed 004), GPS dataset: the neighbours of each cell are
-- the 8 cells around it (sharing an edge or a corner), visited or not: a lattice relation
-- (tgv_places, fixes_grid.sql).
DROP TABLE IF EXISTS pg_temp.tgv_neighbours;
CREATE TEMP TABLE tgv_neighbours ON COMMIT DROP AS
SELECT a.place AS a, (a.col + dc) || ':' || (a.row + dr) AS b
FROM tgv_places AS a, generate_series(-1, 1) AS dc, generate_series(-1, 1) AS dr
WHERE (dc, dr) <> (0, 0);
CREATE INDEX ON tgv_neighbours (a);

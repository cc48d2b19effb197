-- Verifier of trajectory groups (seed 004), GPS dataset: the neighbours of each cell: the 8
-- cells around it (sharing an edge or a corner), among the cells some fix of the window
-- visited (tgv_places, groups_fixes_grid.sql).
DROP TABLE IF EXISTS pg_temp.tgv_neighbours;
CREATE TEMP TABLE tgv_neighbours ON COMMIT DROP AS
SELECT a.place AS a, b.place AS b
FROM tgv_places AS a
JOIN tgv_places AS b
  ON b.col BETWEEN a.col - 1 AND a.col + 1
 AND b.row BETWEEN a.row - 1 AND a.row + 1
 AND b.place <> a.place;
CREATE INDEX ON tgv_neighbours (a);

-- Per cell, what the merge decisions in Python take from the database (the fixes' sums
-- come from the cells kept in memory, fix_cells.py, and so do the persons near each
-- generator, persons_near.py): the generator and the persons it was computed from.
-- Identifiers: work.
SELECT c.cell_id, c.generator_persons, ST_X(c.centroid) AS centroid_x,
       ST_Y(c.centroid) AS centroid_y
FROM {work}.cells AS c
ORDER BY c.cell_id;

-- The fixes summed per final cell, for the metrics' displacement (040_displacement.sql):
-- per cell its fixes, the sum of their distances to its generator (the cell's centroid)
-- and their distinct persons; one more row with a NULL cell holds the distinct persons
-- with a fix in any cell. Progressive generalization writes the rows from the fixes'
-- cells it keeps in memory (FixCells.displacement): no table of every fix's cell is made.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.cell_displacement;
CREATE TABLE {work}.cell_displacement (
    cell_id       integer,
    n_points      bigint,
    distance_sum  float8,
    persons       bigint NOT NULL
);

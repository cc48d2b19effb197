-- What only the membership needs while it computes (the segments between two cells are
-- the size of the window's fixes), and what progressive generalization kept of the
-- previous step (110_voronoi_cells.sql): dropped once the memberships are written.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.recross, {work}.recross_full, {work}.membership_lattice,
    {work}.cells_prev, {work}.clip_box_prev;

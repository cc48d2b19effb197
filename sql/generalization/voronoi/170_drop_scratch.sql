-- What progressive generalization kept of the previous step (110_voronoi_cells.sql),
-- dropped at its end once the visits are written; and the reference membership's scratch
-- (120_membership.sql, 126_segments.sql), where a test made it. Identifiers: work.
DROP TABLE IF EXISTS {work}.recross, {work}.recross_full, {work}.membership_lattice,
    {work}.cells_prev, {work}.clip_box_prev;

-- Every published sequence, cell by cell in published cell ids, with the number of the
-- input trajectory it was derived from (metrics_trajectories of 035_trajectory_numbers.sql;
-- the source never reaches the release): one row per cell, so that Python reads integer
-- columns, not a list per sequence. Ordered by anon_id, so "the first" sequence of a
-- source is well defined. Identifiers: work.
COPY (
    SELECT a.anon_id, n.traj_no, m.release_cell_id
    FROM {work}.anonymized AS a
    JOIN metrics_trajectories AS n ON n.traj_id = a.source_traj_id
    CROSS JOIN LATERAL unnest(a.cells) WITH ORDINALITY AS u(cell_id, ord)
    JOIN {work}.cell_map AS m ON m.cell_id = u.cell_id
    ORDER BY a.anon_id, u.ord
) TO STDOUT (FORMAT csv)

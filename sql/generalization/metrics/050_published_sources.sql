-- Every published sequence, in work cell ids separated by spaces (Python maps them to
-- published ids with ../085_published_cells.sql), with the number of the input trajectory
-- it was derived from (metrics_trajectories of 035_trajectory_numbers.sql; the source never
-- reaches the release). One row per sequence: a row per cell was 19 million rows to sort
-- and send at 25M fixes (22.7 s, auto_explain). Ordered by anon_id, so "the first"
-- sequence of a source is well defined. Identifiers: work.
COPY (
    SELECT n.traj_no, array_to_string(a.cells, ' ')
    FROM {work}.anonymized AS a
    JOIN metrics_trajectories AS n ON n.traj_id = a.source_traj_id
    ORDER BY a.anon_id
) TO STDOUT (FORMAT csv)

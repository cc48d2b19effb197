-- The owner number of each input trajectory, in trajectory number order (one COPY row per
-- trajectory: two million at 25M fixes, which as rows of Python tuples took hundreds of
-- MB). Reads metrics_trajectories (035_trajectory_numbers.sql).
COPY (
    SELECT owner_no FROM metrics_trajectories ORDER BY traj_no
) TO STDOUT WITH (FORMAT csv)

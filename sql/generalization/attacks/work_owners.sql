-- The person number of each trajectory number 0, 1, ... (work_numbers.sql).
COPY (
    SELECT owner_no FROM attack_trajectories ORDER BY traj_no
) TO STDOUT WITH (FORMAT csv)

-- The owner number and number of visits of each generalized trajectory, in trajectory
-- number order (068_sequence_numbers.sql).
COPY (
    SELECT owner_no, n_visits FROM sequence_numbers ORDER BY traj_no
) TO STDOUT (FORMAT csv)

-- The input trajectories of the window numbered 0, 1, ... in traj_id order (the order the
-- samples of the metrics are drawn in: the seeded draws pick numbers, this says whose),
-- with their owner as a number (what k counts; equal numbers, equal persons). One row per
-- trajectory, so Python never reads a string per fix. Temporary: it lives as long as the
-- metrics step's transaction. Reads {work}.input_trajectories (057_input_trajectories.sql,
-- or progressive generalization's); the owners are read by 036_trajectory_owners.sql.
-- Identifiers: work.
DROP TABLE IF EXISTS pg_temp.metrics_trajectories;
CREATE TEMP TABLE metrics_trajectories ON COMMIT DROP AS
SELECT traj_id,
       (row_number() OVER (ORDER BY traj_id) - 1)::integer AS traj_no,
       (dense_rank() OVER (ORDER BY user_id) - 1)::integer AS owner_no
FROM {work}.input_trajectories;
CREATE UNIQUE INDEX ON metrics_trajectories (traj_id);
CREATE UNIQUE INDEX ON metrics_trajectories (traj_no);
ANALYZE metrics_trajectories;

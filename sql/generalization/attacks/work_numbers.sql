-- Attack suite at release, generalization family: the window's trajectories numbered as
-- the verifier's derivation numbers them, so that the attack reads the same targets in the
-- same order from the run's work schema as from raw data: trajectories 0, 1, ... in
-- traj_id order, persons 0, 1, ... in the order of their first trajectory. Temporary (the
-- attack's own connection). Identifiers: work.
DROP TABLE IF EXISTS pg_temp.attack_trajectories;
CREATE TEMP TABLE attack_trajectories AS
WITH numbered AS (
    SELECT traj_id, user_id, row_number() OVER (ORDER BY traj_id) - 1 AS traj_no
    FROM {work}.input_trajectories
), firsts AS (
    SELECT traj_id, traj_no, min(traj_no) OVER (PARTITION BY user_id) AS first_no
    FROM numbered
)
SELECT traj_id, traj_no::integer, (dense_rank() OVER (ORDER BY first_no) - 1)::integer AS owner_no
FROM firsts;
ANALYZE attack_trajectories;

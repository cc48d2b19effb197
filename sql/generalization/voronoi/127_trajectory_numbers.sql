-- Integer numbers for the window's trajectories and persons: the moves progressive
-- generalization keeps in Python between steps (moves.py) are flat integer arrays.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.trajectory_numbers;
CREATE TABLE {work}.trajectory_numbers AS
SELECT traj_id, (row_number() OVER (ORDER BY traj_id))::integer AS traj_no,
       (dense_rank() OVER (ORDER BY user_id))::integer AS person_no
FROM (SELECT DISTINCT traj_id, user_id FROM {work}.points) AS t;
ALTER TABLE {work}.trajectory_numbers ADD PRIMARY KEY (traj_id);
ANALYZE {work}.trajectory_numbers;

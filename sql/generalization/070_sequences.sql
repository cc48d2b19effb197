-- The generalized trajectories as cell arrays, for the prefix-tree step in Python.
-- Identifiers: work.
SELECT traj_id, min(user_id) AS user_id, array_agg(cell_id ORDER BY visit_no) AS cells
FROM {work}.visits
GROUP BY traj_id
ORDER BY traj_id;

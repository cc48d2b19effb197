-- The trajectories a membership update may have changed (125_membership_update.sql):
-- those with a fix that changed cell or a segment whose crossings were recomputed. Any
-- other trajectory visits the same cells in the same order, so its moves stand.
-- Returns traj_no. Identifiers: work.
DROP TABLE IF EXISTS {work}.changed_trajectories;
CREATE TABLE {work}.changed_trajectories AS
SELECT traj_id FROM {work}.moved_points
UNION
SELECT traj_id FROM {work}.rerouted;
SELECT n.traj_no
FROM {work}.changed_trajectories AS c
JOIN {work}.trajectory_numbers AS n USING (traj_id);

-- The trajectories a membership update may have changed (125_membership_update.sql,
-- 128_crossings.sql): those with a fix that changed cell, a crossing deleted, or a segment
-- that went through the general crossing computation (recross_full; the others have no
-- crossings). Any other trajectory visits the same cells in the same order, so its moves
-- stand.
-- changed_memberships holds their memberships, read through each table's (traj_id, ...)
-- index (a filter on the memberships view would be applied after its UNION ALL), for
-- 141_moves_for_python.sql. Returns traj_no. Identifiers: work.
DROP TABLE IF EXISTS {work}.changed_trajectories CASCADE;
CREATE TABLE {work}.changed_trajectories AS
SELECT traj_id FROM {work}.moved_points
UNION
SELECT traj_id FROM {work}.uncrossed
UNION
SELECT traj_id FROM {work}.recross_full;
CREATE VIEW {work}.changed_memberships AS
SELECT pc.traj_id, pc.t, pc.cell_id
FROM {work}.changed_trajectories AS c
JOIN {work}.point_cells AS pc ON pc.traj_id = c.traj_id
WHERE pc.cell_id IS NOT NULL
UNION ALL
SELECT x.traj_id, x.t, x.cell_id
FROM {work}.changed_trajectories AS c
JOIN {work}.crossings AS x ON x.traj_id = c.traj_id;
SELECT n.traj_no
FROM {work}.changed_trajectories AS c
JOIN {work}.trajectory_numbers AS n USING (traj_id);

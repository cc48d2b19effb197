-- After a membership update: the memberships of the trajectories it changed
-- ({work}.changed_trajectories, 125_membership_update.sql), whole trajectories, for
-- 136_moves.sql, and their old moves removed. Every other trajectory has the very
-- memberships, hence moves, it had. Identifiers: work.
DROP TABLE IF EXISTS {work}.changed_memberships;
CREATE TABLE {work}.changed_memberships AS
SELECT traj_id, user_id, t, cell_id
FROM {work}.memberships
WHERE traj_id IN (SELECT traj_id FROM {work}.changed_trajectories);
DELETE FROM {work}.moves
WHERE traj_id IN (SELECT traj_id FROM {work}.changed_trajectories);

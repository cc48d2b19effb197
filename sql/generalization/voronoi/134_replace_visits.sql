-- Swap the changed trajectories' new visits ({work}.changed_visits, from
-- 132_changed_memberships.sql and ../050_visits.sql) and moves in for their old ones. A
-- trajectory whose fixes all fell into gaps now has none. Identifiers: work.
DELETE FROM {work}.visits
WHERE traj_id IN (SELECT traj_id FROM {work}.changed_trajectories);
INSERT INTO {work}.visits (traj_id, user_id, visit_no, cell_id, t_enter, t_exit, n_points)
SELECT traj_id, user_id, visit_no, cell_id, t_enter, t_exit, n_points
FROM {work}.changed_visits;
DELETE FROM {work}.moves
WHERE traj_id IN (SELECT traj_id FROM {work}.changed_trajectories);
DROP TABLE {work}.changed_memberships;

-- The memberships of the trajectories a membership update changed
-- ({work}.changed_trajectories, 125_membership_update.sql), whole trajectories, for
-- ../050_visits.sql to turn into {work}.changed_visits; 134_replace_visits.sql then swaps
-- them in. (The filter sits here, not in 050: a semi-join is not pushed below its
-- window functions.) Identifiers: work.
DROP TABLE IF EXISTS {work}.changed_memberships;
CREATE TABLE {work}.changed_memberships AS
SELECT traj_id, user_id, t, cell_id
FROM {work}.memberships
WHERE traj_id IN (SELECT traj_id FROM {work}.changed_trajectories);

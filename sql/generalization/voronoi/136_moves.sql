-- Moves between consecutive visits (from_cell -> to_cell) of each trajectory of
-- {memberships}, with its owner, appended to {work}.moves (created here), which
-- 140_neighbour_flows.sql counts in distinct persons. The planner needs no more of the
-- visits, so they are not built here (../050_visits.sql builds them once the cells are
-- final): a move is a membership whose cell differs from the trajectory's previous one,
-- which is the pair of consecutive visits once repeats are collapsed (gaps, NULL cells,
-- are not memberships).
-- {memberships} is the work schema's memberships after a full membership (the caller
-- drops moves first), the changed trajectories' after an update
-- (132_changed_memberships.sql). Identifiers: work, memberships.
SET LOCAL work_mem = '256MB';
CREATE TABLE IF NOT EXISTS {work}.moves (
    traj_id text, owner text, from_cell integer, to_cell integer
);
CREATE INDEX IF NOT EXISTS moves_traj_id_idx ON {work}.moves (traj_id);
INSERT INTO {work}.moves (traj_id, owner, from_cell, to_cell)
SELECT traj_id, user_id, from_cell, cell_id
FROM (SELECT traj_id, user_id, cell_id,
             lag(cell_id) OVER (PARTITION BY traj_id ORDER BY t) AS from_cell
      FROM {memberships}) AS m
WHERE from_cell <> cell_id;

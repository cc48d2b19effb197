-- Moves between consecutive visits (from_cell -> to_cell) of each trajectory in {visits},
-- with the trajectory's owner, appended to {work}.moves (created here): all visits after
-- a full membership (the caller empties moves first), the changed trajectories' after an
-- update (134_replace_visits.sql removed their old moves). 140_neighbour_flows.sql counts
-- distinct persons per move from it. Identifiers: work, visits.
CREATE TABLE IF NOT EXISTS {work}.moves (
    traj_id text, owner text, from_cell integer, to_cell integer
);
CREATE INDEX IF NOT EXISTS moves_traj_id_idx ON {work}.moves (traj_id);
INSERT INTO {work}.moves (traj_id, owner, from_cell, to_cell)
SELECT traj_id, owner, from_cell, to_cell
FROM (SELECT traj_id, user_id AS owner, cell_id AS from_cell,
             lead(cell_id) OVER (PARTITION BY traj_id ORDER BY visit_no) AS to_cell
      FROM {visits}) AS m
WHERE to_cell IS NOT NULL;

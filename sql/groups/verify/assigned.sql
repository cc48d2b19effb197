-- Verifier of trajectory groups (seed 004): per published group, the distinct trajectories
-- and persons the private assignment counted in it (only rows that spell the group's
-- sequence on a trajectory of the window: the others are faults of their own).
-- Identifiers: groups (the table under test).
SELECT g.group_id, count(DISTINCT a.traj) AS trajectories, count(DISTINCT a.person) AS persons
FROM {groups} AS g
LEFT JOIN tgv_assignment AS a
  ON a.group_id = g.group_id AND a.known_trajectory AND a.spelt
GROUP BY g.group_id
ORDER BY g.group_id;

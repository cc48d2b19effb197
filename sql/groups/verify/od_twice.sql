-- Verifier of trajectory groups (seed 004): trajectories that are private members of more
-- than one origin group, or of more than one destination group, of the release (§4.3.3:
-- "each trajectory may only be included in at most one origin group and one destination
-- group"). One row per such trajectory and kind: the kind and the od groups (never the
-- trajectory's raw id). Identifiers: od_groups (the table under test), members.
SELECT o.kind, array_agg(DISTINCT o.od_group_id ORDER BY o.od_group_id) AS od_group_ids
FROM {members} AS m
JOIN {od_groups} AS o USING (od_group_id)
GROUP BY o.kind, m.traj_id
HAVING count(DISTINCT o.od_group_id) > 1
ORDER BY 1, 2;

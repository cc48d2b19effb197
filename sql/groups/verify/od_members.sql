-- Verifier of trajectory groups (seed 004): per published origin / destination group, its
-- private members (work schema, before publication) checked against the verifier's own
-- sequences and the private assignment (tgv_assignment):
--   unknown     members whose trajectory is not in the window or is another person's;
--   unassigned  members not counted in the od group's trajectory group;
--   wrong_end   members whose whole window sequence does not start (origin) / end
--               (destination) at one of the od group's places;
--   trajectories, persons: distinct members that are none of these.
-- Members of an od group that is not published give a row of their own (published false).
-- Identifiers: od_groups (the table under test), members (the private table).
WITH m AS (
    SELECT m.od_group_id, m.traj_id, t.person, o.group_id,
           coalesce(t.person = m.user_id, false) AS known,
           EXISTS (SELECT 1 FROM tgv_assignment AS a
                   WHERE a.group_id = o.group_id AND a.traj = m.traj_id
                     AND a.known_trajectory AND a.spelt) AS assigned,
           coalesce(CASE o.kind WHEN 'origin' THEN t.places[1]
                                ELSE t.places[cardinality(t.places)] END = ANY (o.places),
                    false) AS right_end
    FROM {members} AS m
    LEFT JOIN {od_groups} AS o USING (od_group_id)
    LEFT JOIN tgv_trajectories AS t ON t.traj = m.traj_id
)
SELECT od_group_id,
       EXISTS (SELECT 1 FROM {od_groups} AS o WHERE o.od_group_id = x.od_group_id) AS published,
       count(m.traj_id) FILTER (WHERE NOT m.known) AS unknown,
       count(m.traj_id) FILTER (WHERE m.known AND NOT m.assigned) AS unassigned,
       count(m.traj_id) FILTER (WHERE m.known AND NOT m.right_end) AS wrong_end,
       count(DISTINCT m.traj_id) FILTER (WHERE m.known AND m.assigned AND m.right_end)
           AS trajectories,
       count(DISTINCT m.person) FILTER (WHERE m.known AND m.assigned AND m.right_end)
           AS persons
FROM (SELECT od_group_id FROM {od_groups} UNION SELECT od_group_id FROM {members}) AS x
LEFT JOIN m USING (od_group_id)
GROUP BY od_group_id
ORDER BY od_group_id;

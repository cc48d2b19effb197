-- Verifier of trajectory groups (seed 004): faults of the private assignment
-- (tgv_assignment, assignment.sql), as (fault, group_id, rows):
--   unknown_group       rows of a group that is not published;
--   unknown_trajectory  rows of a trajectory not in the window, or of another person;
--   misspelt            rows whose visits do not spell the group's sequence;
--   repeated            (nonoverlapping only) trajectories counted more than once in a group;
--   overlapping         (nonoverlapping only) pairs of rows of one trajectory whose ranges
--                       of visits overlap, in this group or another (§4.3.3: a trajectory
--                       is in several groups only with nonoverlapping parts).
-- Params: nonoverlapping (boolean).
SELECT 'unknown_group' AS fault, group_id, count(*) AS n
FROM tgv_assignment WHERE NOT known_group GROUP BY group_id
UNION ALL
SELECT 'unknown_trajectory', group_id, count(*)
FROM tgv_assignment WHERE NOT known_trajectory GROUP BY group_id
UNION ALL
SELECT 'misspelt', group_id, count(*)
FROM tgv_assignment WHERE known_group AND known_trajectory AND NOT spelt GROUP BY group_id
UNION ALL
SELECT 'repeated', group_id, count(*)
FROM (SELECT group_id, traj FROM tgv_assignment
      WHERE %(nonoverlapping)s GROUP BY group_id, traj HAVING count(*) > 1) AS r
GROUP BY group_id
UNION ALL
SELECT 'overlapping', a.group_id, count(*)
FROM tgv_assignment AS a
JOIN tgv_assignment AS b
  ON b.traj = a.traj AND b.rid <> a.rid
 AND a.seq_start < b.seq_stop AND b.seq_start < a.seq_stop
WHERE %(nonoverlapping)s
GROUP BY a.group_id
ORDER BY 1, 2;

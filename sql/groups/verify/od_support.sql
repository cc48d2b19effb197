-- Verifier of trajectory groups (seed 004): per published origin / destination group, the
-- distinct trajectories and persons that contain its trajectory group's sequence
-- (tgv_occurrences) and whose whole window sequence starts (origin) / ends (destination) at
-- one of its places: an upper bound of its members when they are not available.
-- Identifiers: od_groups (the table under test).
SELECT o.od_group_id, count(DISTINCT oc.traj) AS trajectories,
       count(DISTINCT oc.person) AS persons
FROM {od_groups} AS o
LEFT JOIN (tgv_occurrences AS oc JOIN tgv_trajectories AS t USING (traj))
  ON oc.group_id = o.group_id
 AND CASE o.kind WHEN 'origin' THEN t.places[1]
                 ELSE t.places[cardinality(t.places)] END = ANY (o.places)
GROUP BY o.od_group_id
ORDER BY o.od_group_id;

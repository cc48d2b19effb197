-- Verifier of trajectory groups (seed 004): per published group, its declared length and
-- count interval, and the distinct trajectories and persons whose sequence contains the
-- group's sequence (tgv_occurrences, occurrences.sql).
-- Identifiers: groups (the table under test).
SELECT g.group_id, cardinality(g.places) AS n_places, g.length, g.n_lo, g.n_hi,
       count(DISTINCT o.traj) AS trajectories, count(DISTINCT o.person) AS persons
FROM {groups} AS g
LEFT JOIN tgv_occurrences AS o USING (group_id)
GROUP BY g.group_id
ORDER BY g.group_id;

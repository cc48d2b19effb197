-- Verifier of trajectory groups (seed 004): every occurrence of every published group's
-- sequence as a contiguous part of a trajectory's sequence of places (groups_visits.sql):
-- the visits at the sequence's first place, kept when the trajectory's slice from there
-- equals the whole sequence. (group_id, traj, person, seq_start), one row per occurrence.
-- Identifiers: groups (the table under test).
DROP TABLE IF EXISTS pg_temp.tgv_occurrences;
CREATE TEMP TABLE tgv_occurrences ON COMMIT DROP AS
SELECT g.group_id, v.traj, v.person, v.seq AS seq_start
FROM {groups} AS g
JOIN tgv_visits AS v ON v.place = g.places[1]
JOIN tgv_trajectories AS t ON t.traj = v.traj
WHERE cardinality(g.places) > 0
  AND t.places[v.seq + 1 : v.seq + cardinality(g.places)] = g.places;
CREATE INDEX ON tgv_occurrences (group_id);
ANALYZE tgv_occurrences;

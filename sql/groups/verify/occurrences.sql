-- Verifier of trajectory groups (seed 004): every occurrence of every published group's
-- sequence as a contiguous part of a trajectory's sequence of places (visits.sql):
-- the visits at the sequence's first place followed by its second, kept when the
-- trajectory's slice from there equals the whole sequence (only sequences of three places
-- or more need the slice: fetching every candidate's array was most of the verifier's time).
-- (group_id, traj, person, seq_start), one row per occurrence.
-- Identifiers: groups (the table under test).
DROP TABLE IF EXISTS pg_temp.tgv_group_ends, pg_temp.tgv_occurrences;
CREATE TEMP TABLE tgv_group_ends ON COMMIT DROP AS
SELECT group_id, places, places[1] AS first_place, places[2] AS second_place,
       cardinality(places) AS n_places
FROM {groups}
WHERE cardinality(places) > 0;
ANALYZE tgv_group_ends;

-- Hash joins: the planner cannot tell how many visits a group's first place has and chose
-- index nested loops that read the temporary tables page by page (1M-fix city: 9.1 s
-- against 1.2 s, EXPLAIN ANALYZE).
SET LOCAL enable_nestloop = off;
CREATE TEMP TABLE tgv_occurrences ON COMMIT DROP AS
SELECT g.group_id, v.traj, v.person, v.seq AS seq_start
FROM tgv_group_ends AS g
JOIN tgv_visits AS v ON v.place = g.first_place
WHERE g.n_places = 1 OR (g.n_places = 2 AND v.next_place = g.second_place)
UNION ALL
SELECT g.group_id, v.traj, v.person, v.seq AS seq_start
FROM tgv_group_ends AS g
JOIN tgv_visits AS v ON v.place = g.first_place AND v.next_place = g.second_place
JOIN tgv_trajectories AS t ON t.traj = v.traj
WHERE g.n_places > 2
  AND t.places[v.seq + 1 : v.seq + g.n_places] = g.places;
RESET enable_nestloop;
CREATE INDEX ON tgv_occurrences (group_id);
ANALYZE tgv_occurrences;

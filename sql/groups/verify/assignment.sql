-- Verifier of trajectory groups (seed 004): the run's private assignment (which visits
-- seq_start .. seq_stop - 1 of which trajectory were counted in which group; work schema,
-- before publication only) joined to the verifier's own sequences (visits.sql).
-- Per row: known_group (the group is published), known_trajectory (the trajectory is in
-- the window and belongs to the person the row names), spelt (those visits spell exactly
-- the group's sequence). rid tells rows apart.
-- Identifiers: assignment (the private table), groups (the table under test).
DROP TABLE IF EXISTS pg_temp.tgv_assignment;
CREATE TEMP TABLE tgv_assignment ON COMMIT DROP AS
SELECT row_number() OVER () AS rid, a.group_id, a.traj_id AS traj, t.person,
       a.seq_start, a.seq_stop,
       g.group_id IS NOT NULL AS known_group,
       coalesce(t.person = a.user_id, false) AS known_trajectory,
       coalesce(a.seq_start >= 0 AND a.seq_stop > a.seq_start
                AND t.places[a.seq_start + 1 : a.seq_stop] = g.places, false) AS spelt
FROM {assignment} AS a
LEFT JOIN {groups} AS g USING (group_id)
LEFT JOIN tgv_trajectories AS t ON t.traj = a.traj_id;
CREATE INDEX ON tgv_assignment (traj);
CREATE INDEX ON tgv_assignment (group_id, traj);
ANALYZE tgv_assignment;

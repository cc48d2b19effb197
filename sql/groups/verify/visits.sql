-- Verifier of trajectory groups (seed 004): every trajectory of the window as its sequence
-- of places (after fixes_*.sql). A visit is a maximal run of consecutive fixes of a
-- trajectory (in time order) at one place, so no place follows itself; seq numbers the
-- visits of a trajectory from 0; next_place is the place of the next visit (NULL at the
-- last). tgv_trajectories holds the whole sequence as an array
-- (places[seq + 1] is visit seq), which lets a group's sequence be matched by one slice.
DROP TABLE IF EXISTS pg_temp.tgv_visits, pg_temp.tgv_trajectories;
CREATE TEMP TABLE tgv_visits ON COMMIT DROP AS
SELECT traj, person, (row_number() OVER (PARTITION BY traj ORDER BY t) - 1)::integer AS seq,
       place, lead(place) OVER (PARTITION BY traj ORDER BY t) AS next_place
FROM (SELECT traj, person, t, place,
             lag(place) OVER (PARTITION BY traj ORDER BY t) AS before
      FROM tgv_fixes) AS f
WHERE before IS DISTINCT FROM place;
CREATE INDEX ON tgv_visits (place);
ANALYZE tgv_visits;

CREATE TEMP TABLE tgv_trajectories ON COMMIT DROP AS
SELECT traj, min(person) AS person, array_agg(place ORDER BY seq) AS places
FROM tgv_visits
GROUP BY traj;
ALTER TABLE tgv_trajectories ADD PRIMARY KEY (traj);
ANALYZE tgv_trajectories;

-- Verifier of trajectory groups (seed 004): every trajectory of the window with its person
-- and place sequence (after fixes_*.sql and visits.sql), by person, for the
-- attack suite's view of what an attacker can know.
SELECT traj::text, person::text, places::text[]
FROM tgv_trajectories
ORDER BY person, traj;

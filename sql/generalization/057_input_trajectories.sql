-- {work}.input_trajectories: one row per input trajectory of the window, its person, fixes
-- and length (the sum of the segments between its fixes in time order; ST_MakeLine of a
-- single fix has no length, so 0). The metrics (counts, length histograms, trajectory
-- numbers: metrics/010, 020, 035) and the attack's targets at release read it instead of
-- the fixes. The grid's step makes it here; the Voronoi methods' progressive
-- generalization writes the same rows from the fixes it holds in memory
-- (voronoi/159_input_trajectories_table.sql). Identifiers: work.
SET LOCAL work_mem = '256MB';
DROP TABLE IF EXISTS {work}.input_trajectories;
CREATE TABLE {work}.input_trajectories AS
SELECT traj_id, user_id, count(*) AS n_points,
       coalesce(ST_Length(ST_MakeLine(geom ORDER BY t)), 0) AS len
FROM {work}.points
GROUP BY traj_id, user_id;
ANALYZE {work}.input_trajectories;

-- One row per input trajectory of the window: its person, fixes and length (the sum of the
-- segments between its fixes in time order; ST_MakeLine of a single fix has no length, so
-- 0). The counts, the length histograms and the trajectory numbers (010, 020, 035) all read
-- it: one pass over the window's fixes instead of one per figure (at 25M fixes each pass
-- cost tens of seconds). Temporary: it lives as long as the metrics step's transaction.
-- Identifiers: work.
SET LOCAL work_mem = '256MB';
DROP TABLE IF EXISTS pg_temp.metrics_input;
CREATE TEMP TABLE metrics_input ON COMMIT DROP AS
SELECT traj_id, user_id, count(*) AS n_points,
       coalesce(ST_Length(ST_MakeLine(geom ORDER BY t)), 0) AS len
FROM {work}.points
GROUP BY traj_id, user_id;
ANALYZE metrics_input;

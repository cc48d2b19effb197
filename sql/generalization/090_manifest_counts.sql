-- Exact counts of a generalization run for the manifest (the machinery interval-filters
-- the input ones). Identifiers: work, build.
SELECT (SELECT count(DISTINCT traj_id) FROM {work}.points) AS trajectories_in,
       (SELECT count(DISTINCT user_id) FROM {work}.points) AS persons_in,
       (SELECT count(*) FROM {work}.points) AS points_in,
       (SELECT count(*) FROM {build}.trajectories) AS published,
       (SELECT count(DISTINCT traj_id) FROM {work}.points)
         - (SELECT count(DISTINCT source_traj_id) FROM {work}.anonymized) AS suppressed;

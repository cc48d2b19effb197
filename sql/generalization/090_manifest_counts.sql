-- Exact counts of a generalization run for the manifest (the machinery interval-filters
-- the input ones), from the one row per input trajectory the method's steps wrote
-- ({work}.input_trajectories), not from every fix again (three passes over 25 million
-- fixes took 22 s). Identifiers: work, build.
SELECT (SELECT count(*) FROM {work}.input_trajectories) AS trajectories_in,
       (SELECT count(DISTINCT user_id) FROM {work}.input_trajectories) AS persons_in,
       (SELECT coalesce(sum(n_points), 0)::bigint FROM {work}.input_trajectories) AS points_in,
       (SELECT count(*) FROM {build}.trajectories) AS published,
       (SELECT count(*) FROM {work}.input_trajectories)
         - (SELECT count(DISTINCT source_traj_id) FROM {work}.anonymized) AS suppressed;

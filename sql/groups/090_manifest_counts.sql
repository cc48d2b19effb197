-- Trajectory groups (seed 004): exact counts for the manifest (the machinery
-- interval-filters the input ones): the window's trajectories, persons and visits as the
-- mapping onto places read them, the published groups, and the persons of the window in
-- no published group.
-- Identifiers: work, build.
SELECT (SELECT count(*) FROM {work}.tg_trajectories) AS trajectories_in,
       (SELECT count(DISTINCT person_index) FROM {work}.tg_trajectories) AS persons_in,
       (SELECT count(*) FROM {work}.tg_visits) AS points_in,
       (SELECT count(*) FROM {build}.groups) AS published,
       (SELECT count(DISTINCT person_index) FROM {work}.tg_trajectories)
         - (SELECT count(DISTINCT a.person_index)
            FROM {work}.tg_assignment AS a
            JOIN {work}.tg_group_ids USING (group_index)) AS suppressed;

-- Exact counts of an MLA run for the manifest (the machinery interval-filters the input
-- ones): the window's trajectories, persons and fixes as the preparation read them, the
-- published groups, and the persons of the window in no published group.
-- Identifiers: work, build.
WITH published AS (
    SELECT DISTINCT f.person_index
    FROM {work}.ml_members AS m
    JOIN {work}.ml_group_ids AS g USING (cluster_index)
    JOIN {work}.cl_fixes AS f USING (traj_index)
)
SELECT (SELECT count(DISTINCT traj_index) FROM {work}.cl_fixes) AS trajectories_in,
       (SELECT count(DISTINCT person_index) FROM {work}.cl_fixes) AS persons_in,
       (SELECT count(*) FROM {work}.cl_fixes) AS points_in,
       (SELECT count(*) FROM {build}.groups) AS published,
       (SELECT count(DISTINCT person_index) FROM {work}.cl_fixes)
         - (SELECT count(*) FROM published) AS suppressed;

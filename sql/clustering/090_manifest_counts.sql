-- Exact counts of a clustering run for the manifest (the machinery interval-filters the
-- input ones): the window's trajectories, persons and fixes as the preparation read them,
-- the published groups, and the persons of the window in no published group.
-- Identifiers: work, build.
SELECT (SELECT count(DISTINCT traj_index) FROM {work}.cl_fixes) AS trajectories_in,
       (SELECT count(DISTINCT person_index) FROM {work}.cl_fixes) AS persons_in,
       (SELECT count(*) FROM {work}.cl_fixes) AS points_in,
       (SELECT count(*) FROM {build}.groups) AS published,
       (SELECT count(DISTINCT person_index) FROM {work}.cl_fixes)
         - (SELECT count(DISTINCT p.person_index)
            FROM {work}.cl_pieces AS p
            JOIN {work}.cl_groups AS g USING (piece_id)
            JOIN {work}.cl_group_sizes AS s USING (group_index)) AS suppressed;

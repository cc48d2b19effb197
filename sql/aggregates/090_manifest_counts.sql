-- Aggregates: exact counts for the manifest (the machinery interval-filters the input
-- ones): the window's trajectories, persons and fixes in a zone, the published cells, and
-- the persons of the window counted in no published cell.
-- Identifiers: work, build.
SELECT (SELECT count(DISTINCT traj_id) FROM {work}.ag_fixes) AS trajectories_in,
       (SELECT count(DISTINCT user_id) FROM {work}.ag_fixes) AS persons_in,
       (SELECT count(*) FROM {work}.ag_fixes) AS points_in,
       (SELECT count(*) FROM {build}.presence_counts)
         + (SELECT count(*) FROM {build}.od_counts) AS published,
       (SELECT count(DISTINCT user_id) FROM {work}.ag_fixes)
         - (SELECT count(DISTINCT m.user_id)
            FROM {work}.ag_cell_members AS m
            JOIN {work}.ag_published_cells USING (cell_index)) AS suppressed;

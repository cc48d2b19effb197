-- Measures of a clustering release over its published groups (every one of at least k
-- persons): the average area of a published rectangle, the published (group, time point)
-- rectangles, the persons of the window in a published group, the window's fixes, and
-- the fixes inside the slice of a piece in a published group (what the group stands for).
-- Params: slice_seconds. Identifiers: work, build.
SELECT (SELECT avg(ST_Area(geom)) FROM {build}.group_regions) AS area_per_region_m2,
       (SELECT count(*) FROM {build}.group_regions) AS regions,
       (SELECT count(DISTINCT p.person_index)
        FROM {work}.cl_pieces AS p
        JOIN {work}.cl_groups AS g USING (piece_id)
        JOIN {work}.cl_group_sizes AS s USING (group_index)) AS persons_published,
       (SELECT count(DISTINCT person_index) FROM {work}.cl_fixes) AS persons_in,
       (SELECT count(*) FROM {work}.cl_fixes) AS points_in,
       (SELECT count(*)
        FROM {work}.cl_fixes AS f
        JOIN {work}.cl_pieces AS p
          ON p.traj_index = f.traj_index AND p.slice = floor(f.s / %(slice_seconds)s)
        JOIN {work}.cl_groups AS g USING (piece_id)
        JOIN {work}.cl_group_sizes AS s USING (group_index)) AS points_published,
       (SELECT count(*) FROM {work}.cl_pieces) AS pieces

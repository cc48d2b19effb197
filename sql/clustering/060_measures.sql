-- Measures of a clustering release over its published groups (every one of at least k
-- persons): the average area of a published rectangle, the published (group, time point)
-- rectangles, and the persons of the window in a published group.
-- Identifiers: work, build.
SELECT (SELECT avg(ST_Area(geom)) FROM {build}.group_regions) AS area_per_region_m2,
       (SELECT count(*) FROM {build}.group_regions) AS regions,
       (SELECT count(DISTINCT p.person_index)
        FROM {work}.cl_pieces AS p
        JOIN {work}.cl_groups AS g USING (piece_id)
        JOIN {work}.cl_group_sizes AS s USING (group_index)) AS persons_published,
       (SELECT count(DISTINCT person_index) FROM {work}.cl_fixes) AS persons_in,
       (SELECT count(*) FROM {work}.cl_pieces) AS pieces

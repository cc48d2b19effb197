-- Verifier of trajectory groups (seed 004): the published places against the verifier's own
-- (tgv_places: the dataset's places, or the grid cells near visited ones, in the release's
-- CRS). Returns (fault, place_id), one row per fault:
--   not_a_place  a published place that is no place of the dataset (or no visited cell);
--   moved        its geometry is not that place's (another type or SRID, or further than
--                1e-6 m from it anywhere: Hausdorff distance);
--   unused       published, but no group or od group names it;
--   unpublished  named by a group or od group, but not published.
-- Params: srid. Identifiers: places, groups, od_groups (the tables under test).
WITH named AS (
    SELECT unnest(places) AS place_id FROM {groups}
    UNION
    SELECT unnest(places) FROM {od_groups}
)
SELECT 'not_a_place' AS fault, p.place_id
FROM {places} AS p
WHERE NOT EXISTS (SELECT 1 FROM tgv_places AS d WHERE d.place = p.place_id)
UNION ALL
SELECT 'moved', p.place_id
FROM {places} AS p
JOIN tgv_places AS d ON d.place = p.place_id
WHERE CASE WHEN ST_SRID(p.geom) = %(srid)s AND GeometryType(p.geom) = GeometryType(d.geom)
           THEN ST_HausdorffDistance(p.geom, d.geom) > 1e-6
           ELSE true END
UNION ALL
SELECT 'unused', p.place_id
FROM {places} AS p
WHERE NOT EXISTS (SELECT 1 FROM named AS n WHERE n.place_id = p.place_id)
UNION ALL
SELECT 'unpublished', coalesce(n.place_id, '(null)')
FROM named AS n
WHERE NOT EXISTS (SELECT 1 FROM {places} AS p WHERE p.place_id = n.place_id)
ORDER BY 1, 2;

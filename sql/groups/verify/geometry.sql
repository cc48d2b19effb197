-- Verifier of trajectory groups (seed 004): the geometry of every published group and od
-- group is exactly what the published places give (privacy rule 2: no coordinate of a
-- person): a group's line joins the centroids of its places' published geometries in order
-- (NULL for one place), an od group's multipoint holds them in the order of its places.
-- Any other vertex, order or type is a fault, as is a places value that is no JSON array
-- of strings (tgv_groups, tgv_od_groups: published_places.sql). Returns fault, item.
-- Identifiers: groups, od_groups, places.
WITH group_lines AS (
    SELECT g.group_id,
           (SELECT CASE WHEN count(*) >= 2 AND count(*) = count(p.place_id)
                        THEN ST_MakeLine(ST_Centroid(p.geom) ORDER BY u.ord) END
            FROM unnest(t.places) WITH ORDINALITY AS u(place_id, ord)
            LEFT JOIN {places} AS p ON p.place_id = u.place_id) AS line,
           g.geom, t.places
    FROM {groups} AS g JOIN tgv_groups AS t USING (group_id)
), od_points AS (
    SELECT o.od_group_id,
           (SELECT CASE WHEN count(*) = count(p.place_id)
                        THEN ST_Multi(ST_Collect(ST_Centroid(p.geom) ORDER BY u.ord)) END
            FROM unnest(t.places) WITH ORDINALITY AS u(place_id, ord)
            LEFT JOIN {places} AS p ON p.place_id = u.place_id) AS points,
           o.geom, t.places
    FROM {od_groups} AS o JOIN tgv_od_groups AS t USING (od_group_id)
)
SELECT 'group_places' AS fault, 'group ' || group_id AS item
FROM group_lines WHERE places IS NULL
UNION ALL
SELECT 'group_geometry', 'group ' || group_id
FROM group_lines
WHERE places IS NOT NULL
  AND CASE WHEN line IS NULL OR geom IS NULL THEN (line IS NULL) <> (geom IS NULL)
           ELSE NOT ST_OrderingEquals(line, geom) OR ST_SRID(line) <> ST_SRID(geom) END
UNION ALL
SELECT 'od_places', 'od group ' || od_group_id
FROM od_points WHERE places IS NULL
UNION ALL
SELECT 'od_geometry', 'od group ' || od_group_id
FROM od_points
WHERE places IS NOT NULL
  AND CASE WHEN points IS NULL OR geom IS NULL THEN (points IS NULL) <> (geom IS NULL)
           ELSE NOT ST_OrderingEquals(points, geom) OR ST_SRID(points) <> ST_SRID(geom) END
ORDER BY 1, 2;

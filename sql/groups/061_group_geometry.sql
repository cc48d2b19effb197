-- Trajectory groups (seed 004): draw the published groups and od groups from the published
-- places, so that a GIS user maps a group without SQL. Privacy rule 2 (no coordinate of a
-- person): a group's line joins the points of its places in order, an od group's
-- multipoint holds the points of its places in the order of its places; a place's point is
-- ST_Centroid of its published geometry (the point itself, or the centre of a grid square
-- or cell). A group of one place has no line (NULL). The verifier checks exactly this
-- (verify/geometry.sql). Run after 060_build_release.sql. Identifiers: build.
UPDATE {build}.groups AS g
SET geom = l.line
FROM (SELECT g.group_id, ST_MakeLine(ST_Centroid(p.geom) ORDER BY u.ord) AS line
      FROM {build}.groups AS g
      CROSS JOIN LATERAL jsonb_array_elements_text(g.places) WITH ORDINALITY AS u(place_id, ord)
      JOIN {build}.places AS p ON p.place_id = u.place_id
      GROUP BY g.group_id
      HAVING count(*) >= 2) AS l
WHERE l.group_id = g.group_id;
UPDATE {build}.od_groups AS o
SET geom = m.points
FROM (SELECT o.od_group_id, ST_Multi(ST_Collect(ST_Centroid(p.geom) ORDER BY u.ord)) AS points
      FROM {build}.od_groups AS o
      CROSS JOIN LATERAL jsonb_array_elements_text(o.places) WITH ORDINALITY AS u(place_id, ord)
      JOIN {build}.places AS p ON p.place_id = u.place_id
      GROUP BY o.od_group_id) AS m
WHERE m.od_group_id = o.od_group_id;
CREATE INDEX ON {build}.groups USING gist (geom);
CREATE INDEX ON {build}.od_groups USING gist (geom);

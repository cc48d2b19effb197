-- Aggregates: the zones table of a release whose zones are polygons (grid squares, cells of
-- a generalization release). Params: srid. Identifiers: build.
CREATE TABLE {build}.zones (
    zone_id  integer PRIMARY KEY,
    geom     geometry(Polygon, %(srid)s) NOT NULL,
    centroid geometry(Point, %(srid)s)
);

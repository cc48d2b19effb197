-- Aggregates: the zones table of a release whose zones are the dataset's places (points).
-- Params: srid. Identifiers: build.
CREATE TABLE {build}.zones (
    zone_id  integer PRIMARY KEY,
    geom     geometry(Point, %(srid)s) NOT NULL,
    centroid geometry(Point, %(srid)s)
);

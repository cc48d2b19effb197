-- Aggregates: the zones table of a release whose zones are polygons (grid squares, cells of
-- a generalization release). Params: srid. Identifiers: build.
-- One geometry column a table (GIS tools: GDAL, QGIS): a zone's point is in zone_centroids.
CREATE TABLE {build}.zones (
    zone_id  integer NOT NULL UNIQUE,
    geom     geometry(Polygon, %(srid)s) NOT NULL,
    fid      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
CREATE TABLE {build}.zone_centroids (
    zone_id  integer NOT NULL UNIQUE REFERENCES {build}.zones (zone_id),
    geom     geometry(Point, %(srid)s) NOT NULL,
    fid      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);

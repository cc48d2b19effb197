-- Trajectory groups (seed 004): the release tables, empty, in a fresh build schema (renamed
-- into place later). demographic_classes gets one <attribute>_lo / <attribute>_hi column
-- pair per demographic attribute of the release from the step that fills it.
-- Tables as GIS tools take them (GDAL, QGIS): a single-column integer key fid (a row
-- number in the random row order) with the ids as ordinary unique attributes, one geometry
-- column each (a group's line, a common group's points: 060 draws them from the published
-- places), and place sequences as JSON arrays (GeoPackage has no array type).
-- Params: srid. Identifiers: build.
DROP SCHEMA IF EXISTS {build} CASCADE;
CREATE SCHEMA {build};
CREATE TABLE {build}.places (
    place_id text NOT NULL UNIQUE,
    geom     geometry(Geometry, %(srid)s) NOT NULL,
    fid      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
CREATE TABLE {build}.groups (
    group_id integer NOT NULL UNIQUE,
    places   jsonb NOT NULL,
    length   integer NOT NULL,
    n_lo     integer NOT NULL,
    n_hi     integer NOT NULL,
    geom     geometry(LineString, %(srid)s),
    fid      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
CREATE TABLE {build}.od_groups (
    od_group_id integer NOT NULL UNIQUE,
    group_id    integer NOT NULL REFERENCES {build}.groups (group_id),
    kind        text NOT NULL CHECK (kind IN ('origin', 'destination')),
    places      jsonb NOT NULL,
    n_lo        integer NOT NULL,
    n_hi        integer NOT NULL,
    geom        geometry(MultiPoint, %(srid)s),
    fid         integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
CREATE TABLE {build}.demographic_classes (
    group_id integer NOT NULL REFERENCES {build}.groups (group_id),
    class_id integer NOT NULL,
    n_lo     integer NOT NULL,
    n_hi     integer NOT NULL,
    UNIQUE (group_id, class_id),
    fid      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);

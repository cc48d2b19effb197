-- Trajectory groups (seed 004): the release tables, empty, in a fresh build schema (renamed
-- into place later). demographic_classes gets one <attribute>_lo / <attribute>_hi column
-- pair per demographic attribute of the release from the step that fills it.
-- Params: srid. Identifiers: build.
DROP SCHEMA IF EXISTS {build} CASCADE;
CREATE SCHEMA {build};
CREATE TABLE {build}.places (
    place_id text PRIMARY KEY,
    geom     geometry(Geometry, %(srid)s) NOT NULL
);
CREATE TABLE {build}.groups (
    group_id integer PRIMARY KEY,
    places   text[] NOT NULL,
    length   integer NOT NULL,
    n_lo     integer NOT NULL,
    n_hi     integer NOT NULL
);
CREATE TABLE {build}.od_groups (
    od_group_id integer PRIMARY KEY,
    group_id    integer NOT NULL REFERENCES {build}.groups,
    kind        text NOT NULL CHECK (kind IN ('origin', 'destination')),
    places      text[] NOT NULL,
    n_lo        integer NOT NULL,
    n_hi        integer NOT NULL
);
CREATE TABLE {build}.demographic_classes (
    group_id integer NOT NULL REFERENCES {build}.groups,
    class_id integer NOT NULL,
    n_lo     integer NOT NULL,
    n_hi     integer NOT NULL,
    PRIMARY KEY (group_id, class_id)
);

-- The release tables every clustering method publishes, empty, in a fresh build schema
-- (renamed into place later): groups, and each group's generalized trajectory as regions
-- in order. The method's build file fills them, indexes them and comments on what its
-- rows mean (080: TCAA; 085: MLA). Each table has a single-column integer key fid (a row
-- number, the feature id GIS tools use); group ids stay ordinary unique attributes.
-- Params: srid. Identifiers: build.
DROP SCHEMA IF EXISTS {build} CASCADE;
CREATE SCHEMA {build};

CREATE TABLE {build}.groups (
    group_id  integer NOT NULL UNIQUE,
    n_persons integer,
    fid       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
CREATE TABLE {build}.group_regions (
    group_id integer NOT NULL REFERENCES {build}.groups (group_id),
    seq      integer NOT NULL,
    t_start  timestamptz NOT NULL,
    t_end    timestamptz NOT NULL,
    geom     geometry(Polygon, %(srid)s) NOT NULL,
    UNIQUE (group_id, seq),
    fid      integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
COMMENT ON COLUMN {build}.groups.group_id IS 'Random id of the group, new in every release (group_regions.group_id).';
COMMENT ON COLUMN {build}.group_regions.group_id IS 'The group (groups.group_id).';
COMMENT ON COLUMN {build}.groups.fid IS 'Row number (the feature id GIS tools use); join on group_id.';
COMMENT ON COLUMN {build}.group_regions.fid IS
    'Row number (the feature id GIS tools use); (group_id, seq) is the key of a region.';

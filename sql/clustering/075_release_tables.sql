-- The release tables every clustering method publishes, empty, in a fresh build schema
-- (renamed into place later): groups, and each group's generalized trajectory as regions
-- in order. The method's build file fills them, indexes them and comments on what its
-- rows mean (080: TCAA; 085: MLA).
-- Params: srid. Identifiers: build.
DROP SCHEMA IF EXISTS {build} CASCADE;
CREATE SCHEMA {build};

CREATE TABLE {build}.groups (
    group_id  integer PRIMARY KEY,
    n_persons integer
);
CREATE TABLE {build}.group_regions (
    group_id integer NOT NULL REFERENCES {build}.groups,
    seq      integer NOT NULL,
    t_start  timestamptz NOT NULL,
    t_end    timestamptz NOT NULL,
    geom     geometry(Polygon, %(srid)s) NOT NULL,
    PRIMARY KEY (group_id, seq)
);
COMMENT ON COLUMN {build}.groups.group_id IS 'Random id of the group, new in every release (group_regions.group_id).';
COMMENT ON COLUMN {build}.group_regions.group_id IS 'The group (groups.group_id).';

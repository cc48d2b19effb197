-- Aggregates: the release tables, empty, in a fresh build schema (renamed into place
-- later); zones comes from 051 (polygons) or 052 (points). A method fills one of
-- presence_counts and od_counts and leaves the other empty. Every table has a
-- single-column integer key fid (a row number, the feature id GIS tools use); the key of
-- a count stays a unique constraint. Identifiers: build.
DROP SCHEMA IF EXISTS {build} CASCADE;
CREATE SCHEMA {build};
CREATE TABLE {build}.presence_counts (
    zone_id   integer NOT NULL,
    bin_start timestamptz NOT NULL,
    bin_end   timestamptz NOT NULL,
    n_lo      integer NOT NULL,
    n_hi      integer NOT NULL,
    fid       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    UNIQUE (zone_id, bin_start)
);
CREATE TABLE {build}.od_counts (
    origin_zone_id      integer NOT NULL,
    destination_zone_id integer NOT NULL,
    bin_start           timestamptz NOT NULL,
    bin_end             timestamptz NOT NULL,
    n_lo                integer NOT NULL,
    n_hi                integer NOT NULL,
    fid                 integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    UNIQUE (origin_zone_id, destination_zone_id, bin_start)
);
CREATE TABLE {build}.bin_totals (
    counted   text NOT NULL,
    bin_start timestamptz NOT NULL UNIQUE,
    bin_end   timestamptz NOT NULL,
    n_lo      integer NOT NULL,
    n_hi      integer NOT NULL,
    fid       integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);
CREATE TABLE {build}.totals (
    counted text NOT NULL,
    bins    integer NOT NULL,
    n_lo    integer NOT NULL,
    n_hi    integer NOT NULL,
    fid     integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY
);

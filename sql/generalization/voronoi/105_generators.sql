-- Generators of the Voronoi cells (clusters' and then merged cells' mean of per-person
-- means, on the `snap` lattice), filled by COPY from Python. n_persons: distinct persons
-- among the points the position was computed from (a generator of fewer than k persons
-- would point at them). progressive_log: one row per step of progressive generalization;
-- snap_merges counts generators merged because they snapped onto one lattice point.
-- Params: srid. Identifiers: work.
DROP TABLE IF EXISTS {work}.generators;
CREATE TABLE {work}.generators (
    gen_id    integer PRIMARY KEY,
    x         double precision NOT NULL,
    y         double precision NOT NULL,
    n_points  bigint NOT NULL,
    n_persons integer NOT NULL,
    geom      geometry(Point, %(srid)s)
              GENERATED ALWAYS AS (ST_SetSRID(ST_MakePoint(x, y), %(srid)s)) STORED
);
DROP TABLE IF EXISTS {work}.progressive_log;
CREATE TABLE {work}.progressive_log (
    iteration                integer PRIMARY KEY,
    cells                    integer NOT NULL,
    pairs_below_k            integer NOT NULL,
    thin_generators          integer NOT NULL,
    merges                   integer NOT NULL,
    drops                    integer NOT NULL,
    rejected_by_displacement integer NOT NULL,
    displacement_avg_m       double precision,
    displacement_max_m       double precision,
    snap_merges              integer NOT NULL DEFAULT 0
);

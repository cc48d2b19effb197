-- Empty tables for an MLA run (seed 001; written by COPY from Python): the published
-- clusters' regions in sequence order (edges in metres on the epsilon lattice, times in
-- seconds from the window start, [t_lo, t_hi)), the private membership of trajectories in
-- clusters (never published), and the run's figures for the metrics.
-- Re-running replaces them. Identifiers: work.
DROP TABLE IF EXISTS {work}.ml_regions;
DROP TABLE IF EXISTS {work}.ml_members;
DROP TABLE IF EXISTS {work}.ml_clusters;
DROP TABLE IF EXISTS {work}.ml_summary;
CREATE TABLE {work}.ml_clusters (
    cluster_index   integer PRIMARY KEY,
    matched_persons integer NOT NULL
);
CREATE TABLE {work}.ml_regions (
    cluster_index integer NOT NULL REFERENCES {work}.ml_clusters,
    seq           integer NOT NULL,
    x_lo          float8 NOT NULL,
    x_hi          float8 NOT NULL,
    y_lo          float8 NOT NULL,
    y_hi          float8 NOT NULL,
    t_lo          float8 NOT NULL,
    t_hi          float8 NOT NULL,
    n_points      integer NOT NULL,
    n_persons     integer NOT NULL,
    PRIMARY KEY (cluster_index, seq)
);
CREATE TABLE {work}.ml_members (
    cluster_index integer NOT NULL REFERENCES {work}.ml_clusters,
    traj_index    integer NOT NULL,
    PRIMARY KEY (traj_index, cluster_index)
);
CREATE TABLE {work}.ml_summary (
    loss_bits               bigint NOT NULL,
    cluster_loss_bits_sum   bigint NOT NULL,
    clusters                integer NOT NULL,
    full_suppression_bits   bigint NOT NULL,
    bits_per_point          integer NOT NULL,
    merged_clusters         integer NOT NULL,
    suppressed_clusters     integer NOT NULL,
    below_k_trajectories    bigint NOT NULL,
    clustered_trajectories  bigint NOT NULL,
    length_increase_sum     bigint NOT NULL,
    published_trajectories  bigint NOT NULL,
    area_per_location_m2    float8 NOT NULL
);

-- The flows of the Voronoi methods: per pair of cells (from_cell -> to_cell) the distinct
-- persons and trajectories whose consecutive visits go from one to the other, kept when
-- at least k persons did. Progressive generalization counts them from the visits it makes
-- (tessellation._write_visits, moves.FlowCounter) and fills this table; 060_flows.sql is
-- the same count in SQL (the grid's, and the reference the tests hold this one to).
-- Parameters: {work}, the run's work schema.
DROP TABLE IF EXISTS {work}.flows;
CREATE TABLE {work}.flows (
    from_cell      integer NOT NULL,
    to_cell        integer NOT NULL,
    n_persons      integer NOT NULL,
    n_trajectories integer NOT NULL
);

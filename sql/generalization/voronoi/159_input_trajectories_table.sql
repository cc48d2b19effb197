-- {work}.input_trajectories of the Voronoi methods: one row per input trajectory of the
-- window, its person, fixes and length (the sum of the segments between its fixes in time
-- order, 0 for one fix), written by progressive generalization from the fixes it holds in
-- memory (tessellation._write_input_trajectories), where 057_input_trajectories.sql reads
-- every fix again for the grid. Identifiers: work.
DROP TABLE IF EXISTS {work}.input_trajectories;
CREATE TABLE {work}.input_trajectories (
    traj_id  text NOT NULL,
    user_id  text NOT NULL,
    n_points bigint NOT NULL,
    len      float8 NOT NULL
);

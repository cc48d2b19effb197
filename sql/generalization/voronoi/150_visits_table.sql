-- Generalized trajectories of the Voronoi methods: each trajectory's sequence of visited
-- cells with entry and exit times, consecutive repeats collapsed (seed 000, Definition 3),
-- as 050_visits.sql makes them for the grid (its columns and rules). Progressive
-- generalization writes the rows from the cells it keeps in memory (fix_cells.py:
-- FixCells.visits) in COPY's binary format, times as microseconds since 2000 UTC (no
-- timestamp text to parse: at 25M fixes the server read the visits in 10.7 s, as CSV in
-- 19.0 s), then 155_visits_index.sql indexes them. Identifiers: work.
DROP TABLE IF EXISTS {work}.visits;
CREATE TABLE {work}.visits (
    traj_id   text NOT NULL,
    user_id   text NOT NULL,
    visit_no  integer NOT NULL,
    cell_id   integer NOT NULL,
    t_enter   timestamptz NOT NULL,
    t_exit    timestamptz NOT NULL,
    n_points  integer NOT NULL
);

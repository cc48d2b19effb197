-- Generalized trajectories of the Voronoi methods: each trajectory's sequence of visited
-- cells with entry and exit times, consecutive repeats collapsed (seed 000, Definition 3),
-- as 050_visits.sql makes them for the grid (its columns and rules). Progressive
-- generalization writes the rows from the cells it keeps in memory (fix_cells.py:
-- FixCells.visits), then 155_visits_index.sql indexes them. The times come as UTC
-- wall-clock text without an offset, read in UTC here until 155 resets the zone: Arrow
-- writes a zoned timestamp 35 times slower (1M rows: 1.86 s against 0.05 s; at 25M fixes
-- the CSV of the visits took a minute). Identifiers: work.
SET LOCAL TimeZone = 'UTC';
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

-- Flows between cells: moves from one visited cell to the next, counted in distinct
-- persons and in trajectories (exact here; the release publishes them interval-filtered).
-- Only flows of at least k distinct persons are kept: a flow A->B is the pattern <A, B>,
-- so k distinct persons make it k-anonymous. Params: k. Identifiers: work.
-- The grid's step (visits_and_flows); the Voronoi methods count the same from the visits
-- in memory (voronoi/158_flows_table.sql), and the tests hold that count to this one.
SET LOCAL work_mem = '256MB';
DROP TABLE IF EXISTS {work}.flows;
CREATE TABLE {work}.flows AS
WITH moves AS (
    SELECT traj_id, user_id, cell_id AS from_cell,
           lead(cell_id) OVER (PARTITION BY traj_id ORDER BY visit_no) AS to_cell
    FROM {work}.visits
)
SELECT from_cell, to_cell,
       count(DISTINCT user_id)::integer AS n_persons,
       count(DISTINCT traj_id)::integer AS n_trajectories
FROM moves
WHERE to_cell IS NOT NULL
GROUP BY from_cell, to_cell
HAVING count(DISTINCT user_id) >= %(k)s;

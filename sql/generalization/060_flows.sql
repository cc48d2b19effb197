-- Flows between cells: moves from one visited cell to the next, counted in distinct
-- persons and in trajectories. Only flows whose count (in what k counts) reaches k are
-- kept: a flow A->B is the pattern <A, B>, so k distinct supporters make it k-anonymous.
-- Params: k, count_persons (boolean). Identifiers: work.
DROP TABLE IF EXISTS {work}.flows;
CREATE TABLE {work}.flows AS
SELECT a.cell_id AS from_cell,
       b.cell_id AS to_cell,
       count(DISTINCT a.user_id)::integer AS n_persons,
       count(DISTINCT a.traj_id)::integer AS n_trajectories
FROM {work}.visits AS a
JOIN {work}.visits AS b ON b.traj_id = a.traj_id AND b.visit_no = a.visit_no + 1
GROUP BY a.cell_id, b.cell_id
HAVING CASE WHEN %(count_persons)s THEN count(DISTINCT a.user_id)
            ELSE count(DISTINCT a.traj_id) END >= %(k)s;

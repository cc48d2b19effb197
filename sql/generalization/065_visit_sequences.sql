-- Each trajectory's generalized sequence (work.visits) in work cell ids separated by
-- spaces, one row per trajectory with visits, in the order of the numbers {numbers} gives
-- the trajectories (traj_id, traj_no). The readers map the cells to published ids and
-- leave out the visits of unpublished cells (an attacker can only see published cells):
-- the metrics' linking attack (numbers: metrics/035_trajectory_numbers.sql) and the attack
-- suite at release (attacks/work_numbers.sql). The visits come in
-- (traj_id, visit_no) order from their index, so that no sort runs over the 16 million
-- visits of 25M fixes (a row per visit took 17.9 s, auto_explain). Identifiers: work,
-- numbers.
COPY (
    SELECT n.traj_no, v.cells
    FROM (SELECT traj_id, array_to_string(array_agg(cell_id ORDER BY visit_no), ' ') AS cells
          FROM {work}.visits
          GROUP BY traj_id) AS v
    JOIN {numbers} AS n USING (traj_id)
    ORDER BY n.traj_no
) TO STDOUT (FORMAT csv)

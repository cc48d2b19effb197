-- Attack suite at release, generalization family: each trajectory's visits as the run
-- generalized them ({work}.visits), in work cell ids separated by spaces, one row per
-- trajectory with visits, by trajectory number (generalization_work_numbers.sql). Python
-- maps the cells to published ids (generalization_work_cells.sql) and leaves out those
-- the release does not publish. The visits come in (traj_id, visit_no) order from their
-- index: no sort of the 16 million visits of 25M fixes (a row per visit took 20.5 s,
-- auto_explain). The tests hold the result to the verifier's derivation from raw fixes
-- (tests/test_attack_release.py). Identifiers: work.
COPY (
    SELECT n.traj_no, v.cells
    FROM (SELECT traj_id, array_to_string(array_agg(cell_id ORDER BY visit_no), ' ') AS cells
          FROM {work}.visits
          GROUP BY traj_id) AS v
    JOIN attack_trajectories AS n USING (traj_id)
    ORDER BY n.traj_no
) TO STDOUT WITH (FORMAT csv)

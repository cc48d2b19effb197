-- Attack suite at release, generalization family: every visit of the window's
-- trajectories as the run generalized them ({work}.visits), by trajectory number and in
-- order, with its published cell id, or -1 (the verifier's OUTSIDE) for a cell the
-- release does not publish. The tests hold these to the verifier's derivation from raw
-- fixes (tests/test_attack_release.py). Identifiers: work.
COPY (
    SELECT n.traj_no, coalesce(m.release_cell_id, -1)
    FROM {work}.visits AS v
    JOIN attack_trajectories AS n USING (traj_id)
    LEFT JOIN {work}.cell_map AS m USING (cell_id)
    ORDER BY n.traj_no, v.visit_no
) TO STDOUT WITH (FORMAT csv)

-- Every published sequence with the number of the input trajectory it was derived from
-- (metrics_trajectories of 035_trajectory_numbers.sql; the source never reaches the
-- release), in published cell ids. Ordered by anon_id, so "the first" sequence of a source
-- is well defined. Identifiers: work.
SELECT n.traj_no, array_agg(m.release_cell_id ORDER BY u.ord) AS cells
FROM {work}.anonymized AS a
JOIN metrics_trajectories AS n ON n.traj_id = a.source_traj_id
CROSS JOIN LATERAL unnest(a.cells) WITH ORDINALITY AS u(cell_id, ord)
JOIN {work}.cell_map AS m ON m.cell_id = u.cell_id
GROUP BY a.anon_id, n.traj_no
ORDER BY a.anon_id;

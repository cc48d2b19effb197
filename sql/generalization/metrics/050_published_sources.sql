-- Every published sequence with the input trajectory it was derived from (work only: the
-- source never reaches the release), in published cell ids, with the centroids of its
-- cells (its published line). Ordered by anon_id, so "the first" sequence of a source is
-- well defined. Identifiers: work.
SELECT a.source_traj_id,
       array_agg(m.release_cell_id ORDER BY u.ord) AS cells,
       array_agg(ST_X(c.centroid) ORDER BY u.ord) AS xs,
       array_agg(ST_Y(c.centroid) ORDER BY u.ord) AS ys
FROM {work}.anonymized AS a
CROSS JOIN LATERAL unnest(a.cells) WITH ORDINALITY AS u(cell_id, ord)
JOIN {work}.cell_map AS m ON m.cell_id = u.cell_id
JOIN {work}.cells AS c ON c.cell_id = u.cell_id
GROUP BY a.anon_id, a.source_traj_id
ORDER BY a.anon_id;

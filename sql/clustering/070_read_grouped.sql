-- The synchronized pieces with their published group (-1: in no published group), one
-- row per piece and time point, by piece (COPY, CSV). Identifiers: work.
COPY (SELECT p.piece_id, p.slice, coalesce(s.group_id, -1) AS group_id, q.seq, q.x, q.y
      FROM {work}.cl_pieces AS p
      JOIN {work}.cl_positions AS q USING (piece_id)
      LEFT JOIN {work}.cl_groups AS g USING (piece_id)
      LEFT JOIN {work}.cl_group_sizes AS s USING (group_index)
      ORDER BY p.piece_id, q.seq) TO STDOUT (FORMAT csv);

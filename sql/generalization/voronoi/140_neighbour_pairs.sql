-- Neighbouring cells: pairs sharing an edge, not just a corner (Algorithm 3, line 1).
-- The persons moving between them are counted in Python from the moves kept between
-- steps (141_moves_for_python.sql, moves.py). Returns a_id, b_id (a_id < b_id). Identifiers: work.
SELECT a.cell_id AS a_id, b.cell_id AS b_id
FROM {work}.cells AS a
JOIN {work}.cells AS b
  ON a.cell_id < b.cell_id AND ST_Touches(a.geom, b.geom)
 AND ST_Relate(a.geom, b.geom, '****1****')
ORDER BY a_id, b_id;

-- Neighbouring cells: pairs sharing an edge, not just a corner (Algorithm 3, line 1;
-- 112_cell_edges.sql). The persons moving between them are counted in Python from the
-- cells kept in memory (fix_cells.py, moves.py). Returns a_id, b_id
-- (a_id < b_id). Identifiers: work.
SELECT a_id, b_id FROM {work}.cell_edges ORDER BY a_id, b_id;

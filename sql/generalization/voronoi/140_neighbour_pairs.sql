-- Neighbouring cells: pairs sharing an edge, not just a corner (Algorithm 3, line 1;
-- 112_cell_edges.sql), with the stretch t_min..t_max of the generators' bisector they
-- share (fix_cells.Tessellation: a segment meeting it inside goes straight from one into
-- the other). The persons moving between them are counted in Python from the cells kept
-- in memory (fix_cells.py, moves.py). Returns a_id, b_id (a_id < b_id), t_min, t_max.
-- Identifiers: work.
SELECT a_id, b_id, t_min, t_max FROM {work}.cell_edges ORDER BY a_id, b_id;

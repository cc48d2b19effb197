-- Neighbouring cells (sharing an edge, not just a corner) and the number of distinct
-- persons (what k counts) moving between them in each direction (Algorithm 3, lines 1-4).
-- Moves come from {work}.moves (136_moves.sql).
-- Returns a_id, b_id, a_to_b, b_to_a. Identifiers: work.
WITH pairs AS (
    SELECT a.cell_id AS a_id, b.cell_id AS b_id
    FROM {work}.cells AS a
    JOIN {work}.cells AS b
      ON a.cell_id < b.cell_id AND ST_Touches(a.geom, b.geom)
     AND ST_Relate(a.geom, b.geom, '****1****')
), counted AS (  -- distinct owners first: a hash aggregate, no sort of every move
    SELECT from_cell, to_cell, count(*) AS n
    FROM (SELECT DISTINCT from_cell, to_cell, owner FROM {work}.moves) AS d
    GROUP BY from_cell, to_cell
)
SELECT p.a_id, p.b_id, coalesce(ab.n, 0) AS a_to_b, coalesce(ba.n, 0) AS b_to_a
FROM pairs AS p
LEFT JOIN counted AS ab ON ab.from_cell = p.a_id AND ab.to_cell = p.b_id
LEFT JOIN counted AS ba ON ba.from_cell = p.b_id AND ba.to_cell = p.a_id;

-- Neighbouring cells (sharing an edge, not just a corner) and the number of distinct
-- persons (what k counts) moving between them in each direction (Algorithm 3, lines 1-4).
-- A move is a membership whose cell differs from the trajectory's previous one: the pair
-- of consecutive visits once repeats are collapsed (gaps, NULL cells, are not
-- memberships), so the visits themselves are not built in the loop (../050_visits.sql
-- builds them once the cells are final). Distinct owners are found by a hash aggregate,
-- not a sort of every move. (Keeping the moves per trajectory and recomputing only the
-- changed trajectories' cost more: a step changes a fifth to three fifths of the trajectories of a city
-- of 1M fixes, and the table's upkeep then outweighs one sort, EXPLAIN ANALYZE.)
-- Returns a_id, b_id, a_to_b, b_to_a. Identifiers: work.
SET LOCAL work_mem = '256MB';
WITH pairs AS (
    SELECT a.cell_id AS a_id, b.cell_id AS b_id
    FROM {work}.cells AS a
    JOIN {work}.cells AS b
      ON a.cell_id < b.cell_id AND ST_Touches(a.geom, b.geom)
     AND ST_Relate(a.geom, b.geom, '****1****')
), moves AS (
    SELECT user_id AS owner, cell_id AS to_cell,
           lag(cell_id) OVER (PARTITION BY traj_id ORDER BY t) AS from_cell
    FROM {work}.memberships
), counted AS (
    SELECT from_cell, to_cell, count(*) AS n
    FROM (SELECT DISTINCT from_cell, to_cell, owner FROM moves
          WHERE from_cell <> to_cell) AS d
    GROUP BY from_cell, to_cell
)
SELECT p.a_id, p.b_id, coalesce(ab.n, 0) AS a_to_b, coalesce(ba.n, 0) AS b_to_a
FROM pairs AS p
LEFT JOIN counted AS ab ON ab.from_cell = p.a_id AND ab.to_cell = p.b_id
LEFT JOIN counted AS ba ON ba.from_cell = p.b_id AND ba.to_cell = p.a_id;

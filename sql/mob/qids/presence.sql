-- When each object of a prepared window has a position (sql/mob/020_positions.sql): the
-- presence matrix QIDs are generated from, as runs of consecutive time points, one row per
-- run (object_index, first t_index, last t_index). Runs, not cells: a person present for a
-- day is one row, not 288 (a cell per row made the transfer slower than the preparation).
-- Params: none. Identifiers: work (the schema holding mob_cells).
SELECT object_index, min(t_index) AS first_index, max(t_index) AS last_index
FROM (SELECT object_index,
             t_index,
             t_index - row_number() OVER (PARTITION BY object_index ORDER BY t_index) AS run
      FROM {work}.mob_cells) AS numbered
GROUP BY object_index, run
ORDER BY object_index, first_index;

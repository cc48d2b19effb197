-- The prepared positions for Python, one COPY with a header (read by column name): object,
-- time point, cell.
-- Identifiers: work.
COPY (SELECT object_index, t_index, cx, cy FROM {work}.mob_cells
      ORDER BY object_index, t_index) TO STDOUT (FORMAT csv, HEADER);

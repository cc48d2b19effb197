-- The prepared QIDs for Python (time-point indices per object), with a header (read by
-- column name). Identifiers: work.
COPY (SELECT object_index, t_index FROM {work}.mob_qids
      ORDER BY object_index, t_index) TO STDOUT (FORMAT csv, HEADER);

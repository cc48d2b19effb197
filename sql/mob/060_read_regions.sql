-- The published regions for the metrics, one COPY with a header (read by column name):
-- object, time point, class (-1: own cell), cell ranges. Identifiers: work.
COPY (SELECT object_index, t_index, coalesce(class_id, -1) AS class_id, x0, y0, x1, y1
      FROM {work}.mob_regions ORDER BY t_index, object_index) TO STDOUT (FORMAT csv, HEADER);

-- One row of anonymized per trajectory that publishes a sequence, in trajectory order (so
-- anon_id follows traj_id, as the metrics' "first published sequence of a source" expects).
-- Reads published_sources and published_patterns (075_anonymized.sql) and
-- sequence_numbers (068_sequence_numbers.sql). Identifiers: work.
INSERT INTO {work}.anonymized (source_traj_id, cells)
SELECT n.traj_id, p.cells
FROM published_sources AS s
JOIN sequence_numbers AS n USING (traj_no)
JOIN published_patterns AS p USING (pattern_no)
ORDER BY s.traj_no;
ANALYZE {work}.anonymized;

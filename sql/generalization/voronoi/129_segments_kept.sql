-- After a full membership: the segments whose ends lie in different cells or in a gap
-- (120_membership.sql), with their ends' cells, are kept as {work}.segments for the
-- membership updates of progressive generalization (125_membership_update.sql,
-- 129_segments_changed.sql). Identifiers: work.
-- point_cells (120_membership.sql) and the crossings are analysed here, not whenever
-- autovacuum gets to them: the updates plan their joins on them.
DROP TABLE IF EXISTS {work}.segments;
ALTER TABLE {work}.recross RENAME TO segments;
CREATE INDEX ON {work}.segments (traj_id, t1);
ANALYZE {work}.segments;
ANALYZE {work}.crossings;

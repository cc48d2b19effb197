-- After a full membership: the segments whose ends lie in different cells or in a gap
-- (120_membership.sql), with their ends' cells, are kept as {work}.segments for the
-- membership updates of progressive generalization (125_membership_update.sql,
-- 129_segments_changed.sql). Their seg_id only numbers one crossing computation
-- (128_crossings.sql), and goes. The segments and the crossings are analysed now, as
-- point_cells is in 120_membership.sql: the updates plan their joins on them.
-- Identifiers: work.
DROP TABLE IF EXISTS {work}.segments;
ALTER TABLE {work}.recross RENAME TO segments;
ALTER TABLE {work}.segments DROP COLUMN seg_id;
CREATE INDEX ON {work}.segments (traj_id, t1);
ANALYZE {work}.segments;
ANALYZE {work}.crossings;

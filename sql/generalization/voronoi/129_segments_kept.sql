-- After a full membership: the segments whose crossings were computed (ends in different
-- cells or in a gap, 120_membership.sql) are kept, with their GiST index, as
-- {work}.segments for the membership updates of progressive generalization
-- (125_membership_update.sql). Identifiers: work.
-- The crossings are analysed here for the same reason as point_cells (120_membership.sql):
-- the updates plan their deletes and joins on them.
DROP TABLE IF EXISTS {work}.segments;
ALTER TABLE {work}.recross RENAME TO segments;
CREATE INDEX ON {work}.segments (traj_id, t1);
ANALYZE {work}.crossings;

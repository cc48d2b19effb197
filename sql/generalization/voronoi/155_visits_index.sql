-- After the visits of 150_visits_table.sql are written: their index and statistics, as
-- 050_visits.sql leaves the grid's. Identifiers: work.
CREATE INDEX ON {work}.visits (traj_id, visit_no);
ANALYZE {work}.visits;

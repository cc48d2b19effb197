-- Verifier of trajectory groups (seed 004): the persons of each group that the private
-- assignment counted in it (tg_nonoverlapping, before publication): whom its demographic
-- classes describe. Only rows that spell the group's sequence on a trajectory of the
-- window (tgv_assignment, assignment.sql).
DROP TABLE IF EXISTS pg_temp.tgv_group_persons;
CREATE TEMP TABLE tgv_group_persons ON COMMIT DROP AS
SELECT DISTINCT group_id, person FROM tgv_assignment WHERE known_trajectory AND spelt;
CREATE INDEX ON tgv_group_persons (group_id, person);
ANALYZE tgv_group_persons;

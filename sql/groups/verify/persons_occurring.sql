-- Verifier of trajectory groups (seed 004): the persons of each group whose trajectories
-- contain its sequence (tgv_occurrences): whom its demographic classes may describe when
-- every occurrence counts (tg_overlapping) or the assignment is not available.
DROP TABLE IF EXISTS pg_temp.tgv_group_persons;
CREATE TEMP TABLE tgv_group_persons ON COMMIT DROP AS
SELECT DISTINCT group_id, person FROM tgv_occurrences;
CREATE INDEX ON tgv_group_persons (group_id, person);
ANALYZE tgv_group_persons;

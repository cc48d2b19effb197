-- Trajectory groups (seed 004): ids of the published demographic classes (fresh, random
-- order within each group) and the private map from them to their members' raw user ids
-- (for the verifier's boundary-hiding check; never published). Only classes of published
-- groups with at least k persons. Params: k. Identifiers: work.
DROP TABLE IF EXISTS {work}.tg_class_ids;
CREATE TABLE {work}.tg_class_ids AS
SELECT c.group_index, c.class_index, i.group_id,
       row_number() OVER (PARTITION BY i.group_id ORDER BY random())::integer AS class_id
FROM {work}.tg_classes AS c
JOIN {work}.tg_group_ids AS i USING (group_index)
WHERE c.n_persons >= %(k)s;

INSERT INTO {work}.tg_published_class_members (group_id, class_id, user_id)
SELECT d.group_id, d.class_id, p.user_id
FROM {work}.tg_class_members AS m
JOIN {work}.tg_class_ids AS d USING (group_index, class_index)
JOIN (SELECT DISTINCT person_index, user_id FROM {work}.tg_trajectories) AS p USING (person_index);

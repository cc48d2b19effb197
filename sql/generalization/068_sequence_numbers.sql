-- The generalized trajectories numbered 0, 1, ... in traj_id order, with their owner as a
-- number (what k counts; equal numbers, equal persons) and their number of visits. The
-- prefix-tree step reads them as integer columns (069_sequence_owners.sql,
-- 070_sequences.sql) and finds a result's trajectory by its number (077_fill_anonymized.sql):
-- at 25M fixes, 1.9 million trajectories read as Python rows (a text id and a list of
-- cells each) took a gigabyte. Temporary: it lives as long as the step's transaction.
-- Identifiers: work.
DROP TABLE IF EXISTS pg_temp.sequence_numbers;
CREATE TEMP TABLE sequence_numbers ON COMMIT DROP AS
SELECT traj_id,
       (row_number() OVER (ORDER BY traj_id) - 1)::integer AS traj_no,
       (dense_rank() OVER (ORDER BY user_id) - 1)::integer AS owner_no,
       n_visits
FROM (SELECT traj_id, min(user_id) AS user_id, count(*)::integer AS n_visits
      FROM {work}.visits
      GROUP BY traj_id) AS t;
CREATE UNIQUE INDEX ON sequence_numbers (traj_no);
ANALYZE sequence_numbers;

-- Memory for the sorts and hashes of the metrics step's SQL (trajectory numbers, the
-- published sequences, the grid's fixes in cells), for the whole step's transaction.
SET LOCAL work_mem = '256MB';
ANALYZE {work}.input_trajectories;

-- Attack suite, generalization family: how many trajectories are published (records,
-- with those of no cell). Identifiers: release.
SELECT count(*) AS n_records FROM {release}.trajectories;

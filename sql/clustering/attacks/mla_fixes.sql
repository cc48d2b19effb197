-- Attack suite, clustering family (MLA, aligned): the raw fixes of the window as the
-- verifier reads them (ml_verify_fixes of clustering/verify/sequence_fixes.sql, run first
-- in the same transaction), by trajectory and time; t_us is the instant in microseconds
-- since the epoch (exact, as the verifier's timestamptz comparisons), for the adapter's
-- region test in numpy.
SELECT traj::text, person::text, (extract(epoch FROM t) * 1000000)::int8 AS t_us, x, y
FROM ml_verify_fixes
ORDER BY traj COLLATE "C", t, x, y;

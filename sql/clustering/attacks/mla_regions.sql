-- Attack suite, clustering family (MLA, aligned): every published region as the verifier
-- matches fixes against it (ml_verify_regions of clustering/verify/sequence_support.sql,
-- run first in the same transaction): the closed rectangle [x0, x1] x [y0, y1] over
-- t_start <= t < t_end, times in microseconds since the epoch as in mla_fixes.sql.
SELECT group_id, (extract(epoch FROM t_start) * 1000000)::int8 AS t_start_us,
       (extract(epoch FROM t_end) * 1000000)::int8 AS t_end_us, x0, y0, x1, y1
FROM ml_verify_regions
ORDER BY group_id, step;

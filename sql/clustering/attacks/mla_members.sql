-- Attack suite, clustering family (MLA): the anonymity set of every published group, the
-- persons with a trajectory matching its regions in order (ml_verify_members of
-- clustering/verify/sequence_support.sql, run first in the same transaction).
SELECT group_id, person::text FROM ml_verify_members ORDER BY group_id;

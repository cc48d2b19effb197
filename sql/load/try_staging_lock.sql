-- Take the advisory lock (lock, dataset_id) a running load holds on its dataset id, if no
-- session holds it: taken is false while that load runs. Params: lock, dataset_id.
SELECT pg_try_advisory_lock(%(lock)s, %(dataset_id)s) AS taken;

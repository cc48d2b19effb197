-- MOB (seed 003): whether a dataset has quasi-identifiers (raw.qids) at all, checked
-- before a run: without them the model has nothing to protect against and the run would
-- stop in its anonymization. Params: dataset_id.
SELECT EXISTS (SELECT 1 FROM raw.qids WHERE dataset_id = %(dataset_id)s) AS has_qids;

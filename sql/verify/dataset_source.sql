-- The dataset a release names: its id and the plain digest of its source file, from which
-- the verifier recomputes the keyed fingerprints itself. Params: name.
SELECT dataset_id, source_sha256
FROM raw.datasets
WHERE name = %(name)s;
